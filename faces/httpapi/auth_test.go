package httpapi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/faces/httpapi"
)

// Where the tokens come from, and what is refused: a file others may read, a malformed file,
// a short token, a name that could not be an actor.
func TestLoadTokens(t *testing.T) {
	for _, c := range []struct {
		name, env, file string
		mode            os.FileMode
		want            int
		code            string
	}{
		{name: "nothing configured", want: 0},
		{name: "the environment", env: "env-token-0123456789", want: 1},
		{name: "the file", file: `{"tokens": {"ops": "ops-token-0123456789", "ci": "ci-token-0123456789"}}`, mode: 0o600, want: 2},
		{name: "both", env: "env-token-0123456789", file: `{"tokens": {"ops": "ops-token-0123456789"}}`, mode: 0o600, want: 2},
		{name: "a file others may read", file: `{"tokens": {"ops": "ops-token-0123456789"}}`, mode: 0o644, code: httpapi.CodeTokensFile},
		{name: "a file others may write", file: `{"tokens": {"ops": "ops-token-0123456789"}}`, mode: 0o620, code: httpapi.CodeTokensFile},
		{name: "a malformed file", file: `{"tokens": ["ops"]}`, mode: 0o600, code: httpapi.CodeTokensFile},
		{name: "an unknown key", file: `{"token": {"ops": "ops-token-0123456789"}}`, mode: 0o600, code: httpapi.CodeTokensFile},
		{name: "a short token", file: `{"tokens": {"ops": "short"}}`, mode: 0o600, code: httpapi.CodeTokensFile},
		{name: "a name with a colon", file: `{"tokens": {"a:b": "ops-token-0123456789"}}`, mode: 0o600, code: httpapi.CodeTokensFile},
		{name: "a short token in the environment", env: "short", code: httpapi.CodeTokensFile},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), httpapi.TokensFileName)
			if c.file != "" {
				if err := os.WriteFile(path, []byte(c.file), c.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, c.mode); err != nil {
					t.Fatal(err)
				}
			}
			getenv := func(k string) string {
				if k == httpapi.TokenEnv {
					return c.env
				}
				return ""
			}
			tokens, err := httpapi.LoadTokens(getenv, path)
			if app.CodeOf(err) != c.code || err == nil && tokens.Len() != c.want {
				t.Fatalf("%v, %d tokens; want code %q, %d tokens", err, lenOf(tokens), c.code, c.want)
			}
		})
	}
}

func lenOf(t *httpapi.Tokens) int {
	if t == nil {
		return -1
	}
	return t.Len()
}

// A token matches only itself and names its owner.
func TestTokensMatch(t *testing.T) {
	tokens := &httpapi.Tokens{}
	for name, tok := range map[string]string{"ops": "ops-token-0123456789", "ci": "ci-token-0123456789x"} {
		if err := tokens.Add(name, tok); err != nil {
			t.Fatal(err)
		}
	}
	for presented, want := range map[string]string{"ops-token-0123456789": "ops", "ci-token-0123456789x": "ci",
		"ops-token-012345678": "", "OPS-TOKEN-0123456789": "", "": "", "ops-token-0123456789 ": ""} {
		name, ok := tokens.Match(presented)
		if name != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", presented, name, ok, want)
		}
	}
}
