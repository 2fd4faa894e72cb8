package risk_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

// everyday is a typical agent's shell traffic: what the gate reads on almost every call.
var everyday = []string{
	`go test ./... && go vet ./...`,
	`git status && git diff --stat`,
	`mkdir -p build && cp -r src build/ && tar xzf deps.tgz -C build`,
	`find . -name '*.go' | xargs grep -n TODO`,
	`rm -rf ./build && make -j4 2>&1 | tail -50`,
	`for f in *.go; do gofmt -l "$f"; done`,
}

// BenchmarkAssessEveryday measures the gate on everyday commands (ns per command).
func BenchmarkAssessEveryday(b *testing.B) {
	env := risk.Env{Home: home}
	for i := 0; i < b.N; i++ {
		for _, c := range everyday {
			risk.Assess(c, env)
		}
	}
}

// BenchmarkAssessAttacks measures the gate on the whole table of attacks.
func BenchmarkAssessAttacks(b *testing.B) {
	env := risk.Env{Home: home}
	for i := 0; i < b.N; i++ {
		for _, r := range attacks {
			risk.Assess(r.command, env)
		}
	}
}

// BenchmarkAssessHomeAttacks measures the gate with a working directory and Zuno's data
// directory on issue 25's table (home_test.go).
func BenchmarkAssessHomeAttacks(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, r := range homeAttacks {
			risk.Assess(r.command, workspaceEnv)
		}
	}
}
