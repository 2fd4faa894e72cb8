package verification_test

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/zuno-run/zuno/domain/verification"
)

// benchCommand is a typical verification command with a nested shell, a loop and a pipeline.
const benchCommand = `set -u; cd pkg && go vet ./... && for p in a b c; do go test ./$p/... 2>&1 | tail -20; done; bash -o pipefail -c 'make lint | tee lint.log' || exit 1`

// BenchmarkAnalyze is the analysis of one command; BenchmarkParseOnly, the baseline in the
// same run, is the bash parse alone, so the walk's own cost is the difference.
func BenchmarkAnalyze(b *testing.B) {
	for b.Loop() {
		verification.Analyze(benchCommand, verification.Pipefail, "bash")
	}
}

func BenchmarkParseOnly(b *testing.B) {
	for b.Loop() {
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(benchCommand), ""); err != nil {
			b.Fatal(err)
		}
	}
}
