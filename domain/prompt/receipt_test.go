package prompt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/prompt"
)

// cloneReceipt deep-copies a receipt so that a tamper case cannot leak into the next.
func cloneReceipt(t testing.TB, r prompt.Receipt) prompt.Receipt {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out prompt.Receipt
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sectionIndex(r prompt.Receipt, id string) int {
	for i, s := range r.Sections {
		if s.ID == id {
			return i
		}
	}
	return -1
}

func flipByte(s string, at int) string {
	b := []byte(s)
	b[at] ^= 0x01
	return string(b)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestVerifyDetectsTampering(t *testing.T) {
	base := mustAssemble(t, fullInput()).Receipt
	if err := prompt.Verify(base); err != nil {
		t.Fatalf("Verify(fresh receipt) = %v", err)
	}
	const agentsID = "agents.project:/repo/pkg/AGENTS.md"
	agentsDigest := base.Sections[sectionIndex(base, agentsID)].SHA256
	userDigest := base.Messages[len(base.Sections)].SHA256

	type want struct{ code, subject, id string }
	tests := []struct {
		name   string
		tamper func(r *prompt.Receipt)
		want   []want
		// notWant lists codes that must not be reported: a changed blob leaves the metadata,
		// and so the assembly digest, intact.
		notWant []string
	}{
		{
			name: "one byte flipped in a stored AGENTS.md blob",
			tamper: func(r *prompt.Receipt) {
				r.Blobs[agentsDigest] = flipByte(r.Blobs[agentsDigest], len(r.Blobs[agentsDigest])-3)
			},
			want: []want{
				{prompt.MismatchBlobDigest, "blob", agentsDigest},
				{prompt.MismatchDigest, "section", agentsID},
				{prompt.MismatchActualDigest, "receipt", ""},
			},
			notWant: []string{prompt.MismatchAssemblyDigest, prompt.MismatchBytes},
		},
		{
			name: "one byte flipped in the user message blob",
			tamper: func(r *prompt.Receipt) {
				b := r.Blobs[userDigest]
				r.Blobs[userDigest] = strings.Replace(b, "fix", "fiy", 1)
			},
			want: []want{
				{prompt.MismatchBlobDigest, "blob", userDigest},
				{prompt.MismatchDigest, "message", ""},
				{prompt.MismatchActualDigest, "receipt", ""},
			},
			notWant: []string{prompt.MismatchAssemblyDigest},
		},
		{
			name: "a tool schema changed",
			tamper: func(r *prompt.Receipt) {
				d := r.Tools[0].SHA256
				r.Blobs[d] = strings.Replace(r.Blobs[d], `"properties":{}`, `"properties":{"x":{}}`, 1)
			},
			want: []want{
				{prompt.MismatchBlobDigest, "blob", ""},
				{prompt.MismatchDigest, "tool", "apply_patch"},
				{prompt.MismatchActualDigest, "receipt", ""},
			},
		},
		{
			name:   "a section's size rewritten",
			tamper: func(r *prompt.Receipt) { r.Sections[2].Bytes++ },
			want: []want{
				{prompt.MismatchBytes, "section", base.Sections[2].ID},
				{prompt.MismatchDigest, "message", base.Sections[2].ID},
				{prompt.MismatchAssemblyDigest, "receipt", ""},
			},
			notWant: []string{prompt.MismatchActualDigest},
		},
		{
			name:    "a section's source rewritten",
			tamper:  func(r *prompt.Receipt) { r.Sections[sectionIndex(*r, agentsID)].Source = "/elsewhere/AGENTS.md" },
			want:    []want{{prompt.MismatchAssemblyDigest, "receipt", ""}},
			notWant: []string{prompt.MismatchActualDigest, prompt.MismatchDigest},
		},
		{
			name: "two sections swapped",
			tamper: func(r *prompt.Receipt) {
				i, j := 0, len(r.Sections)-1
				r.Sections[i], r.Sections[j] = r.Sections[j], r.Sections[i]
			},
			want: []want{
				{prompt.MismatchOrder, "section", "agent.build"},
				{prompt.MismatchLane, "section", "agent.build"},
				{prompt.MismatchSectionRef, "message", ""},
				{prompt.MismatchAssemblyDigest, "receipt", ""},
			},
		},
		{
			name:   "a blob deleted",
			tamper: func(r *prompt.Receipt) { delete(r.Blobs, agentsDigest) },
			want: []want{
				{prompt.MismatchBlobMissing, "section", agentsID},
				{prompt.MismatchNotReconstructs, "receipt", ""},
			},
		},
		{
			name:   "an unreferenced blob smuggled in",
			tamper: func(r *prompt.Receipt) { r.Blobs[sha("extra")] = "extra" },
			want:   []want{{prompt.MismatchBlobUnused, "blob", sha("extra")}},
		},
		{
			name:   "a blob under a key that is not a digest",
			tamper: func(r *prompt.Receipt) { r.Blobs["nope"] = "x" },
			want:   []want{{prompt.MismatchBlobKey, "blob", "nope"}},
		},
		{
			name:   "the actual digest rewritten",
			tamper: func(r *prompt.Receipt) { r.ActualDigest = sha("other request") },
			want:   []want{{prompt.MismatchActualDigest, "receipt", ""}},
		},
		{
			name:   "the assembly digest rewritten",
			tamper: func(r *prompt.Receipt) { r.AssemblyDigest = sha("other assembly") },
			want:   []want{{prompt.MismatchAssemblyDigest, "receipt", ""}},
		},
		{
			name:   "the total estimate rewritten",
			tamper: func(r *prompt.Receipt) { r.EstimatedInputTokens-- },
			want:   []want{{prompt.MismatchInputTokens, "receipt", ""}, {prompt.MismatchAssemblyDigest, "receipt", ""}},
		},
		{
			name: "a message blob that decodes but is not canonical, with every digest recomputed",
			tamper: func(r *prompt.Receipt) {
				old := r.Messages[len(r.Sections)].SHA256
				raw := strings.Replace(r.Blobs[old], `{"role"`, `{"Role"`, 1)
				delete(r.Blobs, old)
				d := sha(raw)
				r.Blobs[d] = raw
				r.Messages[len(r.Sections)].SHA256 = d
				r.Messages[len(r.Sections)].Bytes = len(raw)
				r.AssemblyDigest, _ = prompt.AssemblyDigest(*r)
			},
			want: []want{{prompt.MismatchBlobEncoding, "message", ""}},
		},
		{
			name:   "an unknown trust level",
			tamper: func(r *prompt.Receipt) { r.Sections[0].Trust = "root" },
			want:   []want{{prompt.MismatchTrust, "section", "agent.build"}},
		},
		{
			name:   "a future schema",
			tamper: func(r *prompt.Receipt) { r.SchemaVersion = 2 },
			want:   []want{{prompt.MismatchSchemaVersion, "receipt", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cloneReceipt(t, base)
			tt.tamper(&r)
			err := prompt.Verify(r)
			var re *prompt.ReceiptError
			if !errors.As(err, &re) {
				t.Fatalf("Verify = %v, want *ReceiptError", err)
			}
			if re.Code() != prompt.CodeReceiptMismatch {
				t.Fatalf("code %q", re.Code())
			}
			for _, w := range tt.want {
				if !re.Has(w.code, w.subject, w.id) {
					t.Errorf("missing mismatch %s on %s %q; got %v", w.code, w.subject, w.id, re.Mismatches)
				}
			}
			for _, code := range tt.notWant {
				for _, m := range re.Mismatches {
					if m.Code == code {
						t.Errorf("unexpected mismatch %v", m)
					}
				}
			}
			if !strings.HasPrefix(err.Error(), "receipt_mismatch: ") {
				t.Errorf("error text %q", err.Error())
			}
		})
	}
	// The tamper cases worked on copies.
	if err := prompt.Verify(base); err != nil {
		t.Fatalf("base receipt changed: %v", err)
	}
}

func TestReconstructNamesMissingBlobs(t *testing.T) {
	r := cloneReceipt(t, mustAssemble(t, fullInput()).Receipt)
	tool := r.Tools[1]
	delete(r.Blobs, tool.SHA256)
	_, err := prompt.Reconstruct(r)
	var re *prompt.ReceiptError
	if !errors.As(err, &re) || !re.Has(prompt.MismatchBlobMissing, "tool", tool.Name) {
		t.Fatalf("Reconstruct = %v, want a missing blob for tool %s", err, tool.Name)
	}
}

// A receipt recorded with request hooks (Assemble no longer fills them) still decodes from
// the log, keeps them and verifies: they are part of its assembly digest.
func TestRecordedHooksStillVerify(t *testing.T) {
	r := cloneReceipt(t, mustAssemble(t, fullInput()).Receipt)
	r.Hooks.Ran, r.Hooks.RemovedTools = []string{"policy"}, []string{"shell"}
	var err error
	if r.AssemblyDigest, err = prompt.AssemblyDigest(r); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"hooks":{"ran":["policy"],"removedTools":["shell"]}`) {
		t.Fatalf("recorded hooks: %s", b)
	}
	var back prompt.Receipt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := prompt.Verify(back); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	back.Hooks.RemovedTools = nil
	if err := prompt.Verify(back); err == nil {
		t.Fatal("Verify accepted a receipt whose hooks were changed")
	}
}
