package toolset

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/verification"
)

// TestShellReceipts: every foreground shell result carries a verification receipt, addressed
// as [verification rcp_…] and named in the metadata. The first two rows are issue 9's
// contradictions: on 85e0847 both were recorded authoritative.
func TestShellReceipts(t *testing.T) {
	s, _ := newSet(t)
	for _, tc := range []struct {
		args      string
		verdict   string
		authority string
		construct string
		code      int
	}{
		{`{"command":"false | true","exitPolicy":"last"}`, "passed", "derived", verification.ConstructPolicyLast, 0},
		{`{"command":"false || true"}`, "passed", "derived", verification.ConstructFallback, 0},
		{`{"command":"echo 'run tests || true'"}`, "passed", "authoritative", "", 0},
		{`{"command":"false | true"}`, "failed", "authoritative", "", 1},
		{`{"command":"false; true","exitPolicy":"all"}`, "failed", "authoritative", "", 1},
		{`{"command":"bash -c 'false | true'"}`, "passed", "derived", verification.ConstructNestedShell, 0},
		{`{"command":"if false; then echo ok; fi"}`, "passed", "derived", verification.ConstructCondition, 0},
		// bash ran and reported its own 127: the command's failing verdict; only the guard's
		// diagnostic line makes 127 "never started" (docs/shell-execution.md).
		{`{"command":"no-such-command-zuno"}`, "failed", "authoritative", "", 127},
	} {
		id := "call-receipt-" + tc.verdict + tc.authority + tc.construct
		r := callID(t, s, tools.NameShell, id, tc.args)
		rc := r.Receipt
		if rc == nil {
			t.Fatalf("%s: no receipt", tc.args)
		}
		if rc.ReceiptID != verification.ReceiptID(testSession, id) || r.Metadata.Verification != rc.ReceiptID {
			t.Errorf("%s: receipt id %s, metadata %s", tc.args, rc.ReceiptID, r.Metadata.Verification)
		}
		if rc.Verdict != tc.verdict || rc.Authority != tc.authority || rc.ExitCode == nil || *rc.ExitCode != tc.code ||
			rc.Interpreter != "bash" || rc.CallID != id || rc.SessionID != testSession {
			t.Errorf("%s: %+v", tc.args, rc)
		}
		if tc.construct != "" && (len(rc.Limitations) == 0 || rc.Limitations[0].Construct != tc.construct) {
			t.Errorf("%s: limitations %+v, want %s", tc.args, rc.Limitations, tc.construct)
		}
		if !strings.Contains(r.Output, "\n[verification "+rc.ReceiptID+"] "+tc.verdict+", "+tc.authority) {
			t.Errorf("%s: the result does not address its receipt:\n%s", tc.args, r.Output)
		}
		if f := facts(t, r); f["authoritative"] != (tc.authority == "authoritative") {
			t.Errorf("%s: details authoritative %v", tc.args, f["authoritative"])
		}
	}
}

// TestShellReceiptOfATimeout: a command stopped at its timeout decided nothing: no exit code,
// no authority.
func TestShellReceiptOfATimeout(t *testing.T) {
	s, _ := newSet(t)
	r := call(t, s, tools.NameShell, `{"command":"sleep 30","timeoutMs":200}`)
	if rc := r.Receipt; rc == nil || rc.Verdict != "unknown" || rc.Authority != "none" || rc.ExitCode != nil || !rc.TimedOut {
		t.Fatalf("%+v", r.Receipt)
	}
}
