package prompt_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
)

func TestDebugViewRedaction(t *testing.T) {
	in := fullInput()
	const secret = "SECRET-TOKEN-42"
	in.ProjectAgents[0].Content = []byte("Deploy with " + secret + ".\n")
	in.GlobalAgents.Content = []byte("The global file mentions " + secret + ".\n")
	a := mustAssemble(t, in)

	tests := []struct {
		name      string
		sensitive bool
	}{
		{"default: redacted", false},
		{"--show-sensitive", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := prompt.NewDebugView(a.Receipt, tt.sensitive)
			if v.Verification != "" || v.Sensitive != tt.sensitive {
				t.Fatalf("view verification %q sensitive %v", v.Verification, v.Sensitive)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if leaked := strings.Contains(string(out), secret); leaked == !tt.sensitive {
				t.Fatalf("secret shown = %v, want %v", leaked, tt.sensitive)
			}
			if v.Receipt.Blobs != nil {
				t.Fatal("the view carries the receipt's blobs")
			}
			for i, s := range v.Sections {
				// Metadata stays: ids, sources, sizes and digests.
				if s.PromptSection != a.Receipt.Sections[i] || s.PromptSection != v.Receipt.Sections[i] {
					t.Errorf("section %d metadata %+v, want %+v", i, s.PromptSection, a.Receipt.Sections[i])
				}
				if want := a.Sections[i].Content; !tt.sensitive {
					want = prompt.Redacted
					if s.Content != want {
						t.Errorf("section %s content %q, want %q", s.ID, s.Content, want)
					}
				} else if s.Content != want {
					t.Errorf("section %s content differs from what was sent", s.ID)
				}
			}
			if len(v.Projection.Messages) != len(a.Request.Messages) || !reflect.DeepEqual(v.Projection.Tools, a.Request.Tools) {
				t.Fatal("projection does not match the request")
			}
			for i, m := range v.Projection.Messages {
				hidden := m.Role == model.RoleSystem || m.Role == model.RoleDeveloper
				want := a.Request.Messages[i].Text
				if hidden && !tt.sensitive {
					want = prompt.Redacted
				}
				if m.Text != want {
					t.Errorf("projection message %d (%s) = %q, want %q", i, m.Role, m.Text, want)
				}
			}
			if v.Receipt.AssemblyDigest != a.Receipt.AssemblyDigest || v.Receipt.ActualDigest != a.Receipt.ActualDigest ||
				!reflect.DeepEqual(v.Receipt.Hooks, a.Receipt.Hooks) {
				t.Error("digests or hook state missing from the view")
			}
		})
	}
	// Redacting the view did not touch the receipt it came from.
	if err := prompt.Verify(a.Receipt); err != nil {
		t.Fatal(err)
	}
}

func TestDebugViewOfTamperedReceipt(t *testing.T) {
	r := cloneReceipt(t, mustAssemble(t, fullInput()).Receipt)
	d := r.Sections[0].SHA256
	r.Blobs[d] = flipByte(r.Blobs[d], 0)
	v := prompt.NewDebugView(r, false)
	if !strings.Contains(v.Verification, "receipt_mismatch") || !strings.Contains(v.Verification, "agent.build") {
		t.Fatalf("verification = %q, want the mismatch named", v.Verification)
	}
	if len(v.Sections) != len(r.Sections) || v.Sections[0].Content != prompt.Redacted {
		t.Fatal("a receipt that fails verification must still be shown, redacted")
	}
}

// TestDebugViewKeysAreCamelCase: `zuno debug prompt --format json` has one key style. Tool
// parameter schemas are left out: they are what the model is sent, named by each tool.
func TestDebugViewKeysAreCamelCase(t *testing.T) {
	v := prompt.NewDebugView(mustAssemble(t, fullInput()).Receipt, true)
	v.Verification = "receipt_mismatch: example"
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	json.Unmarshal(out, &tree)
	var walk func(path string, n any)
	walk = func(path string, n any) {
		switch x := n.(type) {
		case map[string]any:
			for k, child := range x {
				if k == "" || k[0] < 'a' || k[0] > 'z' || strings.ContainsAny(k, "_-") {
					t.Errorf("%s.%s: not camelCase", path, k)
				}
				if k != "schema" {
					walk(path+"."+k, child)
				}
			}
		case []any:
			for _, child := range x {
				walk(path+"[]", child)
			}
		}
	}
	walk("", tree)
	for _, k := range []string{`"receipt":`, `"sections":`, `"projection":`, `"sensitive":`, `"verification":`, `"content":`} {
		if !strings.Contains(string(out), k) {
			t.Errorf("no %s key", k)
		}
	}
}

// TestReceiptErrorStatesItsCodeOnce: the code leads the message once, and Detail, which
// wrapping errors quote, carries none.
func TestReceiptErrorStatesItsCodeOnce(t *testing.T) {
	r := mustAssemble(t, fullInput()).Receipt
	r.AssemblyDigest = "0000"
	err := prompt.Verify(r)
	re, ok := err.(*prompt.ReceiptError)
	if !ok {
		t.Fatalf("Verify = %v", err)
	}
	if n := strings.Count(err.Error(), prompt.CodeReceiptMismatch); n != 1 || !strings.HasPrefix(err.Error(), prompt.CodeReceiptMismatch+": ") {
		t.Fatalf("code stated %d times: %s", n, err)
	}
	if strings.Contains(re.Detail(), prompt.CodeReceiptMismatch) {
		t.Fatalf("detail repeats the code: %s", re.Detail())
	}
}
