package delegation_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/events"
)

// TestLogicalKey: what changes a contract's logical key and what does not (seeds 002 §7.5).
func TestLogicalKey(t *testing.T) {
	base := delegation.LogicalKey(contract())
	if !regexp.MustCompile(`^lk_[0-9a-f]{64}$`).MatchString(base) {
		t.Fatalf("key %q", base)
	}
	rows := []struct {
		name    string
		edit    func(*events.DelegationContract)
		changes bool
	}{
		{"nothing", func(*events.DelegationContract) {}, false},
		{"space around a text", func(c *events.DelegationContract) { c.Objective = "  " + c.Objective + "\n" }, false},
		{"space around the agent", func(c *events.DelegationContract) { c.Agent = " explorer " }, false},
		{"an empty scope", func(c *events.DelegationContract) { c.Scope = &events.ContractScope{} }, false},
		{"empty constraint lists", func(c *events.DelegationContract) {
			c.Constraints = &events.ContractConstraints{Must: []string{}}
		}, false},
		{"empty dependencies", func(c *events.DelegationContract) { c.Dependencies = []string{} }, false},
		{"the agent", func(c *events.DelegationContract) { c.Agent = "reviewer" }, true},
		{"the objective", func(c *events.DelegationContract) { c.Objective += "!" }, true},
		{"the deliverable", func(c *events.DelegationContract) { c.Deliverable += "!" }, true},
		{"the instructions", func(c *events.DelegationContract) { c.Instructions += "!" }, true},
		{"the success evidence", func(c *events.DelegationContract) { c.SuccessEvidence += "!" }, true},
		{"space inside a text", func(c *events.DelegationContract) { c.Objective = "Find  the receipt gap" }, true},
		{"a scope entry", func(c *events.DelegationContract) { c.Scope = &events.ContractScope{Include: []string{"a"}} }, true},
		{"include moved to exclude", func(c *events.DelegationContract) { c.Scope = &events.ContractScope{Exclude: []string{"a"}} }, true},
		{"a must", func(c *events.DelegationContract) { c.Constraints = &events.ContractConstraints{Must: []string{"a"}} }, true},
		{"must moved to must_not", func(c *events.DelegationContract) {
			c.Constraints = &events.ContractConstraints{MustNot: []string{"a"}}
		}, true},
		{"a dependency", func(c *events.DelegationContract) { c.Dependencies = []string{"a"} }, true},
		{"texts swapped between fields", func(c *events.DelegationContract) {
			c.Objective, c.Deliverable = c.Deliverable, c.Objective
		}, true},
	}
	for _, r := range rows {
		c := contract()
		r.edit(&c)
		if got := delegation.LogicalKey(c); (got != base) != r.changes {
			t.Errorf("%s: changes=%v, want %v", r.name, got != base, r.changes)
		}
	}
	// List order is kept: the parent's order of priority.
	a, b := contract(), contract()
	a.Dependencies, b.Dependencies = []string{"x", "y"}, []string{"y", "x"}
	if delegation.LogicalKey(a) == delegation.LogicalKey(b) {
		t.Error("list order ignored")
	}
	// An entry boundary is part of the key: ["a b"] is not ["a", "b"].
	a.Dependencies, b.Dependencies = []string{"a b"}, []string{"a", "b"}
	if delegation.LogicalKey(a) == delegation.LogicalKey(b) {
		t.Error("entries joined")
	}
}

// TestLogicalKeyMemberOrder: the same contract written with its JSON members in another
// order, as the model may, has the same key.
func TestLogicalKeyMemberOrder(t *testing.T) {
	one := `{"agent":"explorer","objective":"O","deliverable":"D","instructions":"I","success_evidence":"S",` +
		`"scope":{"include":["a"],"exclude":["b"]},"constraints":{"must":["m"],"must_not":["n"]},"dependencies":["d"]}`
	two := `{"dependencies":["d"],"constraints":{"must_not":["n"],"must":["m"]},"scope":{"exclude":["b"],"include":["a"]},` +
		`"success_evidence":" S","instructions":"I ","deliverable":"D","objective":"O","agent":"explorer"}`
	var a, b events.DelegationContract
	if err := json.Unmarshal([]byte(one), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(two), &b); err != nil {
		t.Fatal(err)
	}
	if delegation.LogicalKey(a) != delegation.LogicalKey(b) {
		t.Fatal("member order changed the key")
	}
}

// TestLogicalKeyStable: the key of a fixed contract is fixed; a change of the canonical form
// is a deliberate new version, not an accident (keys are stored on agent_job rows).
func TestLogicalKeyStable(t *testing.T) {
	const want = "lk_18c7bfdcf5875b1908f3f3117cd43f05fe61feca7c1abb7e45fe90d6e8d7c7ba"
	if got := delegation.LogicalKey(contract()); got != want {
		t.Fatalf("key %s, want %s", got, want)
	}
}
