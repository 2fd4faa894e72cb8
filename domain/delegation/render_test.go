package delegation_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/events"
)

// TestRenderPresentParts: the required parts always, the optional ones only when given, in the
// contract's order, and the digest is the SHA-256 of the text.
func TestRenderPresentParts(t *testing.T) {
	text, digest := delegation.Render(contract())
	for _, h := range []string{"## Objective\n\nFind the receipt gap\n", "## Deliverable\n\nCall chain and gap\n",
		"## Instructions\n\nRead only\n", "## Success evidence\n\nExact files and symbols\n", "agent explorer"} {
		if !strings.Contains(text, h) {
			t.Errorf("missing %q in\n%s", h, text)
		}
	}
	for _, h := range []string{"## Scope", "## Constraints", "## Dependencies"} {
		if strings.Contains(text, h) {
			t.Errorf("absent part %q rendered", h)
		}
	}
	sum := sha256.Sum256([]byte(text))
	if digest != hex.EncodeToString(sum[:]) {
		t.Fatal("digest is not the text's SHA-256")
	}
}

func TestRenderAll(t *testing.T) {
	c := contract()
	c.Objective = "  Find it\n"
	c.Scope = &events.ContractScope{Include: []string{"crates/engine"}, Exclude: []string{"credential stores"}}
	c.Constraints = &events.ContractConstraints{MustNot: []string{"edit files", "line one\nline two"}}
	c.Dependencies = []string{"index is current"}
	text, _ := delegation.Render(c)
	want := `## Objective

Find it

## Deliverable`
	if !strings.Contains(text, want) {
		t.Errorf("objective not trimmed:\n%s", text)
	}
	order := []string{"## Objective", "## Deliverable", "## Instructions", "## Success evidence", "## Scope",
		"Include:\n\n- crates/engine\n", "Exclude:\n\n- credential stores\n", "## Constraints",
		"Must not:\n\n- edit files\n- line one\n  line two\n", "## Dependencies\n\n- index is current\n"}
	at := 0
	for _, s := range order {
		i := strings.Index(text[at:], s)
		if i < 0 {
			t.Fatalf("%q missing or out of order in\n%s", s, text)
		}
		at += i
	}
	if strings.Contains(text, "Must:") {
		t.Error("an empty must list is rendered")
	}
	// The same contract renders the same bytes; another contract another digest.
	_, d1 := delegation.Render(c)
	c.Dependencies = nil
	_, d2 := delegation.Render(c)
	if d1 == d2 {
		t.Error("digest ignores dependencies")
	}
}
