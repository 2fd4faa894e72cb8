package verification_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/verification"
)

// TestInterpreterRules is the seeds' table: pipefail and all authoritative on bash, ksh and
// zsh; last derived; any interpreter not known to support pipefail derived (sh on purpose);
// PowerShell authoritative only under all.
func TestInterpreterRules(t *testing.T) {
	A, D := true, false
	for _, tc := range []struct {
		interp        string
		pf, all, last bool
	}{
		{"bash", A, A, D}, {"/usr/bin/bash", A, A, D}, {"ksh", A, A, D}, {"ksh93", A, A, D}, {"zsh", A, A, D},
		{"dash", D, D, D}, {"sh", D, D, D}, {"/bin/sh", D, D, D}, {"mksh", D, D, D}, {"fish", D, D, D}, {"", D, D, D},
		{"pwsh", D, A, D}, {"powershell.exe", D, A, D}, {`C:\Program Files\PowerShell\7\pwsh.exe`, D, A, D},
	} {
		cmd := "go test ./..."
		for p, want := range map[verification.Policy]bool{verification.Pipefail: tc.pf, verification.All: tc.all, verification.Last: tc.last} {
			if got := verification.Analyze(cmd, p, tc.interp).Authoritative; got != want {
				t.Errorf("%q under %s: authoritative = %v, want %v", tc.interp, p, got, want)
			}
		}
	}
	if an := verification.Analyze("true", "sometimes", "bash"); an.Authoritative || an.Limitations[0].Construct != verification.ConstructUnknown {
		t.Errorf("an unknown policy: %+v", an)
	}
}

// TestPowerShell: native-to-native pipelines keep only the last code; cmdlets do not; syntax
// the reader does not know is derived.
func TestPowerShell(t *testing.T) {
	for _, tc := range []struct {
		cmd       string
		auth      bool
		construct string
	}{
		{"cargo test", true, ""},
		{"cargo test | Select-Object -Last 5", true, ""},
		{"cargo test | select -Last 5", true, ""},
		{"cargo test | tail -5", false, verification.ConstructNativePipeline},
		{"& 'C:\\tools\\go.exe' test ./... | findstr FAIL", false, verification.ConstructNativePipeline},
		{"cargo test 2>&1 | Out-File log.txt", true, ""},
		{"cargo test || exit 0", false, verification.ConstructFallback},
		{"cargo build && cargo test; echo done", false, verification.ConstructAndChain},
		{"cargo build && cargo test", true, ""},
		{"cargo test &", false, verification.ConstructBackground},
		{"Get-ChildItem | ForEach-Object { $_.Name }", false, verification.ConstructPowerShellUnread},
		{"echo $(cargo test)", false, verification.ConstructPowerShellUnread},
		{"echo 'cargo test | tail'", true, ""},
		{`echo "a | b"`, true, ""},
		{"echo 'unterminated", false, verification.ConstructPowerShellUnread},
		{"cargo test # | tail", true, ""},
	} {
		an := verification.Analyze(tc.cmd, verification.All, "pwsh")
		if an.Authoritative != tc.auth || (tc.construct != "" && !hasConstruct(an, tc.construct)) {
			t.Errorf("pwsh %q: %+v, want authoritative %v with %s", tc.cmd, an, tc.auth, tc.construct)
		}
	}
}

// TestLimitationsNameTheConstructAndTheRemedy: the note names the construct as written and
// says what to do instead.
func TestLimitationsNameTheConstructAndTheRemedy(t *testing.T) {
	an := verification.Analyze("go vet ./... && go test ./... || true", verification.Pipefail, "bash")
	if len(an.Limitations) != 1 {
		t.Fatalf("limitations: %+v", an.Limitations)
	}
	l := an.Limitations[0]
	if l.Construct != verification.ConstructFallback || l.Text != "go vet ./... && go test ./... || true" ||
		!strings.Contains(l.Remedy, "exit 1") {
		t.Errorf("limitation: %+v", l)
	}
	long := "if " + strings.Repeat("x", 200) + "; then :; fi"
	if l := verification.Analyze(long, verification.Pipefail, "bash").Limitations[0]; len(l.Text) > 90 {
		t.Errorf("an excerpt of %d bytes: %q", len(l.Text), l.Text)
	}
	multi := "if go test\nthen :; fi"
	if l := verification.Analyze(multi, verification.Pipefail, "bash").Limitations[0]; strings.Contains(l.Text, "\n") {
		t.Errorf("a multi-line excerpt: %q", l.Text)
	}
}

// TestSettle: the verdict of each way a run can end (seeds: guard codes, signals, cancellation).
func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		facts verification.Facts
		want  verification.Verdict
	}{
		{"exit 0", verification.Facts{HasCode: true}, verification.Passed},
		{"exit 1", verification.Facts{HasCode: true, Code: 1}, verification.Failed},
		{"a command's own exit 125 keeps its receipt", verification.Facts{HasCode: true, Code: 125}, verification.Failed},
		{"the guard's 125 is no verdict", verification.Facts{HasCode: true, Code: 125, GuardFailed: true}, verification.Unknown},
		{"127: never started", verification.Facts{HasCode: true, Code: 127, NeverStarted: true}, verification.NotStarted},
		{"126: never started", verification.Facts{HasCode: true, Code: 126, NeverStarted: true}, verification.NotStarted},
		{"a signal is no verdict", verification.Facts{Signal: "SIGKILL"}, verification.Unknown},
		{"timed out and killed", verification.Facts{TimedOut: true, Killed: true}, verification.Unknown},
		{"cancelled and killed", verification.Facts{Cancelled: true, Killed: true}, verification.Unknown},
		{"cancelled after it exited: its own verdict stands", verification.Facts{Cancelled: true, HasCode: true, Code: 2}, verification.Failed},
		{"killed at a hard limit", verification.Facts{HasCode: true, Killed: true}, verification.Unknown},
		{"an unsettled status", verification.Facts{HasCode: true, Unsettled: true}, verification.Unknown},
		{"no status at all", verification.Facts{}, verification.Unknown},
	} {
		if got, why := verification.Settle(tc.facts); got != tc.want || why == "" {
			t.Errorf("%s: %s (%q), want %s", tc.name, got, why, tc.want)
		}
	}
}

func TestReceipt(t *testing.T) {
	call := verification.Call{SessionID: "ses_1", TurnID: "trn_1", CallID: "call_1", Command: "false | true", Workdir: "."}
	auth := verification.Analyze("go test ./...", verification.Pipefail, "bash")
	derived := verification.Analyze("false || true", verification.Pipefail, "bash")

	r := verification.NewReceipt(call, auth, verification.Facts{HasCode: true, Code: 1})
	if r.Authority != "authoritative" || r.Verdict != "failed" || *r.ExitCode != 1 || r.Coverage != "last_statement" ||
		r.Interpreter != "bash" || r.Policy != "pipefail" || r.Command != "false | true" || r.ReceiptID != verification.ReceiptID("ses_1", "call_1") {
		t.Errorf("authoritative receipt: %+v", r)
	}
	if err := verification.Evidence(r); err != nil {
		t.Errorf("an authoritative receipt is evidence: %v", err)
	}
	if err := verification.PassingEvidence(r); domain.CodeOf(err) != verification.CodeNotEvidence {
		t.Errorf("a failing receipt as passing evidence: %v", err)
	}
	r = verification.NewReceipt(call, auth, verification.Facts{HasCode: true})
	if err := verification.PassingEvidence(r); err != nil {
		t.Errorf("a passing authoritative receipt: %v", err)
	}

	d := verification.NewReceipt(call, derived, verification.Facts{HasCode: true})
	if d.Authority != "derived" || !strings.Contains(d.Reason, "fallback") || len(d.Limitations) != 1 {
		t.Errorf("derived receipt: %+v", d)
	}
	if err := verification.Evidence(d); domain.CodeOf(err) != verification.CodeNotEvidence || !strings.Contains(err.Error(), d.ReceiptID) {
		t.Errorf("a derived receipt is not evidence: %v", err)
	}

	k := verification.NewReceipt(call, auth, verification.Facts{Cancelled: true, Killed: true})
	if k.Authority != "none" || k.Verdict != "unknown" || k.ExitCode != nil || k.Coverage != "none" || !k.Cancelled {
		t.Errorf("a killed run: %+v", k)
	}
	if verification.Evidence(k) == nil {
		t.Error("a killed run's receipt is evidence")
	}
	n := verification.NewReceipt(call, auth, verification.Facts{HasCode: true, Code: 127, NeverStarted: true})
	if n.Authority != "none" || n.ExitCode == nil || *n.ExitCode != 127 {
		t.Errorf("127: the code is recorded without authority: %+v", n)
	}
	if line := verification.Line(r); line != "[verification "+r.ReceiptID+"] passed, authoritative" {
		t.Errorf("line: %q", line)
	}
}

func TestReceiptID(t *testing.T) {
	a := verification.ReceiptID("ses_1", "call_1")
	if a != verification.ReceiptID("ses_1", "call_1") || !verification.ValidReceiptID(a) {
		t.Errorf("not deterministic or not valid: %s", a)
	}
	for _, other := range []string{verification.ReceiptID("ses_2", "call_1"), verification.ReceiptID("ses_1", "call_2"),
		verification.ReceiptID("ses_1\ncall", "_1")} {
		if other == a {
			t.Errorf("two calls share %s", a)
		}
	}
	for _, bad := range []string{"", "rcp_", "rcp_xyz", "RCP_" + a[4:], "rcp_" + strings.ToUpper(a[4:]), a + "0", "ses_" + a[4:]} {
		if verification.ValidReceiptID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
