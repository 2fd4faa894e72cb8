package delegation

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/zuno-run/zuno/events"
)

// ContractSource is the source a child's prompt receipt names for the rendered contract,
// with the job id after the colon: the text came from that job's admitted contract. The job
// runtime that starts the child (commands/app) names it.
const ContractSource = "zuno-delegation:"

// Render writes the contract as the child's task: Markdown with one heading per part the
// contract has (Objective, Deliverable, Instructions, Success evidence, then Scope,
// Constraints and Dependencies when given), every text trimmed. digest is the hex SHA-256 of
// text, in the form prompt receipts give every section (events.PromptSection.SHA256), so the
// child's receipt can be matched to the job's contract.
//
// It returns text, not a prompt.Section: a section's lane, order and priority are assigned by
// prompt.Assemble, which has no lane for a delegated task yet; the job runtime that starts
// the child (commands/app) places it.
func Render(c events.DelegationContract) (text string, digest string) {
	var b strings.Builder
	b.WriteString("# Delegated task\n\nYour parent session delegated this task to you as agent " + trim(c.Agent) +
		". This contract is the authority on what to do. Report to the parent: questions and blockers go in your " +
		"report, never to the user.\n")
	section(&b, "Objective", trim(c.Objective))
	section(&b, "Deliverable", trim(c.Deliverable))
	section(&b, "Instructions", trim(c.Instructions))
	section(&b, "Success evidence", trim(c.SuccessEvidence))
	if s := c.Scope; s != nil && (len(s.Include) > 0 || len(s.Exclude) > 0) {
		b.WriteString("\n## Scope\n")
		list(&b, "Include", s.Include)
		list(&b, "Exclude", s.Exclude)
	}
	if k := c.Constraints; k != nil && (len(k.Must) > 0 || len(k.MustNot) > 0) {
		b.WriteString("\n## Constraints\n")
		list(&b, "Must", k.Must)
		list(&b, "Must not", k.MustNot)
	}
	if len(c.Dependencies) > 0 {
		b.WriteString("\n## Dependencies\n\n")
		items(&b, c.Dependencies)
	}
	text = b.String()
	sum := sha256.Sum256([]byte(text))
	return text, hex.EncodeToString(sum[:])
}

func section(b *strings.Builder, heading, body string) {
	b.WriteString("\n## " + heading + "\n\n" + body + "\n")
}

func list(b *strings.Builder, label string, entries []string) {
	if len(entries) == 0 {
		return
	}
	b.WriteString("\n" + label + ":\n\n")
	items(b, entries)
}

// items writes one bullet per entry; an entry's further lines are indented under its bullet,
// so a multi-line entry stays one item.
func items(b *strings.Builder, entries []string) {
	for _, e := range entries {
		b.WriteString("- " + strings.ReplaceAll(trim(e), "\n", "\n  ") + "\n")
	}
}
