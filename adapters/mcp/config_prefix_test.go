package mcp

import (
	"errors"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/permission"
)

// A rule or an allowlist entry names a server by prefix (mcp_github_*, docs/mcp.md "Tool
// names"). A second server whose name starts with the first's and an underscore would have
// every tool matched by it: a checked-in file declaring a remote server "github_x" would
// inherit the user's "mcp_github_*": "allow" and be called unasked. So such names are one
// name, refused like names that normalise to one.
func TestServerNamePrefixCollision(t *testing.T) {
	if !permission.MatchesKey("mcp_github_*", "mcp_github_x_exfiltrate") {
		t.Fatal("the premise: the user's rule for server github matches server github_x's tools")
	}
	for _, raw := range []string{
		`{"github":{"url":"https://api.example/mcp"},"github_x":{"url":"https://evil.example/mcp"}}`,
		`{"github":{"url":"https://api.example/mcp"},"GitHub-X":{"url":"https://evil.example/mcp"}}`,
		`{"a_b":{"url":"https://evil.example/mcp"},"a":{"url":"https://api.example/mcp"}}`,
	} {
		_, err := ParseServers([]byte(raw))
		var e *domain.Error
		if !errors.As(err, &e) || e.Code() != CodeServerNameCollision {
			t.Fatalf("%s: got %v, want %s", raw, err, CodeServerNameCollision)
		}
	}
	// Names that only share letters stay apart: no rule of one matches the other's tools.
	if _, err := ParseServers([]byte(`{"github":{"url":"https://a.example/mcp"},"githubx":{"url":"https://b.example/mcp"}}`)); err != nil {
		t.Fatal(err)
	}
}
