package delegation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// keyVersion names the canonical form below; a change of the form is a new version, so keys
// written by one build are never compared with another's by accident.
const keyVersion = "zuno.delegation.logical_key.v1"

// canonical is the contract as the logical key sees it: a fixed member order, every text
// trimmed, and every list present (absent, null and [] are one contract). List order is kept:
// it is the parent's order of priority.
type canonical struct {
	Version         string   `json:"v"`
	Agent           string   `json:"agent"`
	Objective       string   `json:"objective"`
	Deliverable     string   `json:"deliverable"`
	Instructions    string   `json:"instructions"`
	SuccessEvidence string   `json:"success_evidence"`
	Include         []string `json:"scope_include"`
	Exclude         []string `json:"scope_exclude"`
	Must            []string `json:"must"`
	MustNot         []string `json:"must_not"`
	Dependencies    []string `json:"dependencies"`
}

// LogicalKey is the stable identity of one logical task: "lk_" and the hex SHA-256 of the
// agent and the contract in canonical form. Two task calls with one key are the same task
// (seeds 002 §7.5): the job ledger refuses the second while the first is queued, running,
// uncertain or its nextStep report is unconsumed. It does not depend on the JSON member order
// the model wrote, nor on space around texts; task_id, background, reportDelivery and intent
// are not part of it (the same work continued in another child, or asked for in the
// foreground instead, is still the same work). The job ledger computes it at admission
// (commands/app, Jobs.Delegate) and stores it on the job (events.JobState.LogicalKey).
func LogicalKey(c events.DelegationContract) string {
	k := canonical{Version: keyVersion, Agent: trim(c.Agent), Objective: trim(c.Objective),
		Deliverable: trim(c.Deliverable), Instructions: trim(c.Instructions), SuccessEvidence: trim(c.SuccessEvidence),
		Include: present(nil), Exclude: present(nil), Must: present(nil), MustNot: present(nil),
		Dependencies: present(trimAll(c.Dependencies))}
	if s := c.Scope; s != nil {
		k.Include, k.Exclude = present(trimAll(s.Include)), present(trimAll(s.Exclude))
	}
	if m := c.Constraints; m != nil {
		k.Must, k.MustNot = present(trimAll(m.Must)), present(trimAll(m.MustNot))
	}
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // strings and string slices always marshal
	}
	sum := sha256.Sum256(b)
	return "lk_" + hex.EncodeToString(sum[:])
}

func present(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
