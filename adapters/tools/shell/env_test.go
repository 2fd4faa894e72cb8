package shell

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestEnvironExcludes(t *testing.T) {
	base := []string{"PATH=/bin", "ZUNO_OPENAI_API_KEY=ns", "zuno_x=1", "OPENAI_API_KEY=host", "AWS_SECRET=s",
		"aws_profile=p", "HOME=/h", "ZUNO=1", "AGENT=1", "GH_TOKEN=t"}
	env, withheld := Environ(base, []string{"OPENAI_API_KEY", "aws_*", "GH_T?KEN"})
	want := []string{"PATH=/bin", "HOME=/h", "ZUNO=1", "AGENT=1"}
	if !slices.Equal(env, want) {
		t.Fatalf("env %v, want %v", env, want)
	}
	// Only names the patterns withheld, never the namespace's (that is the rule, always) and
	// never a value.
	if w := []string{"AWS_SECRET", "GH_TOKEN", "OPENAI_API_KEY", "aws_profile"}; !slices.Equal(withheld, w) {
		t.Fatalf("withheld %v, want %v", withheld, w)
	}
	// No pattern can put a ZUNO_* name back: the list only removes.
	env, withheld = Environ(base, nil)
	for _, kv := range env {
		if strings.HasPrefix(strings.ToUpper(kv), "ZUNO_") {
			t.Fatalf("namespace leaked: %s", kv)
		}
	}
	if withheld != nil {
		t.Fatalf("withheld without patterns: %v", withheld)
	}
}

func TestValidateExclude(t *testing.T) {
	for _, bad := range []string{"", " ", "!ZUNO_DB", "A=B", "[", "X\x00"} {
		if err := ValidateExclude([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := ValidateExclude([]string{"OPENAI_API_KEY", "AWS_*", "*_TOKEN", "K[0-9]"}); err != nil {
		t.Fatal(err)
	}
}

func TestRunnerWithholdsExcludedFromCommand(t *testing.T) {
	r := &Runner{Exclude: []string{"SECRET_*"}, BaseEnv: func() []string {
		return []string{"PATH=/usr/bin:/bin", "SECRET_A=aaa-value", "ZUNO_OPENAI_API_KEY=ns-value", "KEEP=k"}
	}}
	res, err := r.Run(context.Background(), Request{Command: "env"})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	if strings.Contains(out, "aaa-value") || strings.Contains(out, "ns-value") || !strings.Contains(out, "KEEP=k") {
		t.Fatalf("env output:\n%s", out)
	}
	if _, w := r.Environ(); !slices.Equal(w, []string{"SECRET_A"}) {
		t.Fatalf("withheld %v", w)
	}
}
