package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/verification"
)

type shellTool struct{ s *Set }

// Sandboxed is the shell tool's view of its sandbox: the turn records Sandbox() on the
// call's events (find the shell among Tools() and assert this interface).
type Sandboxed interface {
	Sandbox() sandbox.Resolution
}

// Sandbox is the resolution every command of this shell runs under, for the turn to record
// on the call's events (the zero Resolution when the host configured no sandbox).
func (t *shellTool) Sandbox() sandbox.Resolution {
	if t.s.cfg.Sandbox == nil {
		return sandbox.Resolution{}
	}
	return t.s.cfg.Sandbox.Resolution
}

// WithheldEnv names the host variables shell.env.exclude withholds from this shell's
// commands beyond the ZUNO_* namespace, as of now, for the call's started event
// (tools.EnvWithholder; docs/tools.md). Foreground and background commands share the list.
func (t *shellTool) WithheldEnv() []string {
	_, withheld := t.s.shell.Environ()
	return withheld
}

type shellArgs struct {
	Command    string `json:"command"`
	Workdir    string `json:"workdir"`
	TimeoutMs  int    `json:"timeoutMs"`
	ExitPolicy string `json:"exitPolicy"`
	Background bool   `json:"background"`
}

var shellSchema = schema.MustCompile(tools.NameShell, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "run as bash -c", "minLength": 1},
    "workdir": {"type": "string", "description": "relative to the workspace root; default the root", "minLength": 1},
    "timeoutMs": {"type": "integer", "description": "default from the session", "minimum": 1, "maximum": %d},
    "exitPolicy": {"type": "string", "description": "pipefail (default): any failing pipeline stage fails; all: also stop at the first failing command; last: only the last stage counts", "enum": [%q, %q, %q]},
    "background": {"type": "boolean"}
  },
  "required": ["command"],
  "additionalProperties": false
}`, MaxShellTimeout.Milliseconds(), shell.PolicyPipefail, shell.PolicyAll, shell.PolicyLast)), schema.Rules{StrictText: true,
	Example: `{"command": "go test ./...", "timeoutMs": 300000}`})

func (t *shellTool) Declaration() tools.Declaration {
	// A background command is still a side effect and is scheduled exclusively: it starts
	// changing things before the call settles.
	return tools.Declaration{Name: tools.NameShell, Policy: mutatingPolicy}
}

func (t *shellTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameShell, Schema: shellSchema.Raw(), Description: fmt.Sprintf(
		"Run a bash command in the workspace, stdout and stderr combined. The result starts with the exit status "+
			"(non-zero is reported, not an error). On timeout (default %s) the process group is stopped and effects may "+
			"be partial: inspect before running anything again. Output over %d bytes or %d lines is saved to an artifact "+
			"instead of shown. Use read, glob, grep, write and apply_patch for files. background: true returns a task "+
			"id for bg at once.",
		t.s.cfg.ShellTimeout, t.s.cfg.MaxBytes, t.s.cfg.MaxLines)}
}

func (t *shellTool) WritesWorkspace() bool { return true }

func (t *shellTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	a, err := parseShell(args)
	return tools.Parsed{Args: a}, err
}

func parseShell(args json.RawMessage) (shellArgs, error) {
	var a shellArgs
	if err := shellSchema.Decode(args, &a); err != nil {
		return a, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return a, domain.Invalid("command", "command is blank", shellSchema.Fix("command"))
	}
	if a.Background && a.TimeoutMs != 0 {
		return a, domain.Invalid("timeoutMs", "timeoutMs does not apply to a background command",
			"leave timeoutMs out when background is true (cancel it with bg instead), or run it in the foreground")
	}
	return a, nil
}

func (t *shellTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(shellArgs)
	if !ok {
		return notValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	if r, refused := t.preflight(ctx, a); refused {
		return r
	}
	if a.Background {
		return t.background(ctx, inv, a)
	}
	timeout := t.s.cfg.ShellTimeout
	if a.TimeoutMs > 0 {
		timeout = time.Duration(a.TimeoutMs) * time.Millisecond
	}
	// Output over the byte cap is spooled into the artifact directory as it arrives; a
	// failure here shows up as the spool's error.
	_ = t.s.art.ensureDir()
	keep, refusal := t.s.diskBudget()
	if refusal != nil {
		return *refusal
	}
	res, err := t.s.shell.Run(ctx, shell.Request{
		MaxKeep:    keep.bytes,
		Command:    a.Command,
		Dir:        a.Workdir,
		Timeout:    timeout,
		ExitPolicy: shell.ExitPolicy(a.ExitPolicy),
		WatchPaths: watchPaths(a.Command),
	})
	if err != nil {
		res.RemoveSpool()
		if len(res.Argv) > 0 {
			// The command started and then could not be waited for: what it did is unknown, and
			// whatever status it reported is no verdict.
			rc := t.s.receipt(inv, a, res, true)
			return tools.Result{Outcome: tools.OutcomeUncertain, ErrorCode: string(shell.CodeOf(err)),
				Output: "shell: the command started but its end could not be observed (" + err.Error() +
					"). Inspect the state it was changing before doing anything else; do not run it again unchanged.\n" +
					verification.Line(rc),
				Metadata: tools.Metadata{Verification: rc.ReceiptID}, Receipt: &rc}
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: string(CodeCancelled),
				Output: "The call was cancelled before the command started; nothing was run."}
		}
		return failure(tools.NameShell, err, true)
	}
	rc := t.s.receipt(inv, a, res, false)
	r := t.s.shellResult(inv.CallID, timeout, res, rc)
	if res.Capped {
		return capped(r, keep, res)
	}
	return r
}

// receipt builds the call's verification receipt from the analysis of its text and the facts
// of its ending (domain/verification; docs/tools.md, "Exit policies and verification receipts").
func (s *Set) receipt(inv tools.Invocation, a shellArgs, res shell.Result, unsettled bool) verification.Receipt {
	session := inv.SessionID
	if session == "" {
		session = s.cfg.SessionID
	}
	policy := a.ExitPolicy
	if policy == "" {
		policy = string(shell.PolicyPipefail)
	}
	interpreter := s.shell.Bash
	if interpreter == "" {
		interpreter = "bash"
	}
	an := verification.Analyze(a.Command, verification.Policy(policy), interpreter)
	return verification.NewReceipt(verification.Call{SessionID: session, CallID: inv.CallID, Command: a.Command,
		Workdir: s.relOr(res.Dir)}, an, shellFacts(res, unsettled))
}

// shellFacts maps the adapter's result onto the verdict's facts: only the guard's own
// diagnostic makes 125 a guard failure and 126/127 "never started" (docs/shell-execution.md).
func shellFacts(res shell.Result, unsettled bool) verification.Facts {
	return verification.Facts{HasCode: res.HasExitCode, Code: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut,
		Cancelled: res.Cancelled, Killed: res.Killed, GuardFailed: res.GuardFailed, NeverStarted: res.NeverStarted,
		Unsettled: unsettled || res.Unsettled}
}

type shellDetails struct {
	ExitCode       *int   `json:"exitCode"`
	Signal         string `json:"signal,omitempty"`
	TimedOut       bool   `json:"timedOut"`
	Cancelled      bool   `json:"cancelled"`
	Killed         bool   `json:"killed"`
	Authoritative  bool   `json:"authoritative"`
	DurationMs     int64  `json:"durationMs"`
	TimeoutMs      int64  `json:"timeoutMs"`
	ExitPolicy     string `json:"exitPolicy"`
	Workdir        string `json:"workdir"`
	TotalBytes     int64  `json:"totalBytes"`
	TotalLines     int    `json:"totalLines"`
	OutputDetached bool   `json:"outputDetached,omitempty"`
	ArtifactError  string `json:"artifactError,omitempty"`
	// The guard's and the cancellation's facts (shell.Result documents each).
	GuardFailed        bool   `json:"guardFailed,omitempty"`
	NeverStarted       bool   `json:"neverStarted,omitempty"`
	GuardDiagnostic    string `json:"guardDiagnostic,omitempty"`
	ExitedBeforeCancel bool   `json:"exitedBeforeCancel,omitempty"`
	Unsettled          bool   `json:"unsettled,omitempty"`
}

// shellResult renders a settled run. A command that ran is completed whatever its exit
// status. The outcome is uncertain, never replayed, when nothing can say what the command
// changed: Zuno stopped it while it ran (a cancellation or the hard limit: a timeout near a
// side effect may have left it half done), the guard failed (exit 125 of its own), or a
// cancelled run could not be settled (docs/shell-execution.md, "Cancellation").
func (s *Set) shellResult(callID string, timeout time.Duration, res shell.Result, rc verification.Receipt) tools.Result {
	facts := shellDetails{
		Signal: res.Signal, TimedOut: res.TimedOut, Cancelled: res.Cancelled, Killed: res.Killed,
		Authoritative: rc.Authority == string(verification.Authoritative), DurationMs: res.Duration.Milliseconds(), TimeoutMs: timeout.Milliseconds(),
		ExitPolicy: string(res.ExitPolicy), Workdir: s.relOr(res.Dir), TotalBytes: res.TotalBytes,
		TotalLines: res.TotalLines, OutputDetached: res.OutputDetached,
		GuardFailed: res.GuardFailed, NeverStarted: res.NeverStarted, GuardDiagnostic: res.GuardDiagnostic,
		ExitedBeforeCancel: res.ExitedBeforeCancel, Unsettled: res.Unsettled,
	}
	if res.HasExitCode {
		code := res.ExitCode
		facts.ExitCode = &code
	}
	var written []string
	for _, p := range res.WrittenPaths {
		if rel, ok := s.rel(p); ok {
			written = append(written, rel)
			// The file is not what any earlier read saw: the next write or patch of it
			// needs a fresh read, as after any change the model has not looked at.
			s.ws.Credentials.Invalidate(rel)
		}
	}
	meta := tools.Metadata{WrittenPaths: written, Verification: rc.ReceiptID}

	var b strings.Builder
	b.WriteString(statusLine(res, timeout))
	b.WriteString("\n")
	b.WriteString(verification.Line(rc))
	b.WriteString("\n")
	if len(written) > 0 {
		b.WriteString("Files observed changed: " + strings.Join(written, ", ") + "\n")
	}
	if res.OutputDetached {
		b.WriteString("(A process that left the command's process group kept its output open; capture stopped when the group was stopped.)\n")
	}
	if res.Withheld != nil {
		w := &tools.WithheldOutput{Bytes: res.Withheld.Bytes, Lines: res.Withheld.Lines, Limit: res.Withheld.Limit,
			MaxBytes: res.Withheld.MaxBytes, MaxLines: res.Withheld.MaxLines}
		h, err := s.withholdShell(callID, res, w)
		if err != nil {
			facts.ArtifactError = err.Error()
			fmt.Fprintf(&b, "The output (%d bytes in %d lines) is over tool_output.%s and could not be saved for read-back (%v), so it is not shown. "+
				"The command's status above stands.", res.Withheld.Bytes, res.Withheld.Lines, res.Withheld.Limit, err)
		} else {
			b.WriteString(h.notice)
			meta.OutputPaths, meta.WithheldOutput = h.meta.OutputPaths, h.meta.WithheldOutput
		}
	} else {
		res.RemoveSpool() // none: a spool exists only for output over the byte cap
		b.WriteString(res.InlineText())
	}
	meta.Details = details(facts)
	r := completed(b.String(), meta)
	r.Receipt = &rc
	switch {
	case res.Cancelled && (res.Killed || res.Unsettled):
		r.Outcome, r.ErrorCode = tools.OutcomeUncertain, string(CodeInterrupted)
	case res.GuardFailed:
		r.Outcome, r.ErrorCode = tools.OutcomeUncertain, string(CodeGuardFailed)
	case res.TimedOut && res.Killed:
		r.Outcome, r.ErrorCode = tools.OutcomeUncertain, string(CodeTimedOut)
	}
	return r
}

// withholdShell stores a withheld output as the call's artifact: the raw bytes the command
// wrote, not a decoded copy. Output over the byte cap is already whole in the shell's spool
// and is kept from there, never read into memory.
func (s *Set) withholdShell(callID string, res shell.Result, w *tools.WithheldOutput) (withheld, error) {
	const hint = "Do not rerun the command just to see its output."
	if res.Capped {
		return s.art.withholdKept(callID, res, w)
	}
	switch {
	case res.Spool != "":
		return s.art.withholdSpool(callID, tools.NameShell, res.Spool, w, hint)
	case res.SpoolErr != nil:
		return withheld{}, fmt.Errorf("spooling the output: %w", res.SpoolErr)
	}
	return s.art.withhold(callID, tools.NameShell, res.Output, w, hint)
}

// statusLine is the first line the model reads: how the command ended, and what that
// proves. Only the guard's own report makes 125, 126 or 127 the guard's.
func statusLine(res shell.Result, timeout time.Duration) string {
	switch {
	case res.GuardFailed:
		return "Outcome unknown: Zuno's process guard failed (exit 125 is the guard's, not the command's: " + res.GuardDiagnostic +
			"). Whether the command ran and what it changed is unknown; it is never re-run automatically. " +
			"Inspect the state it would have changed before deciding what to do next."
	case res.NeverStarted:
		return fmt.Sprintf("Exit code %d from Zuno's process guard: the program never started (%s). Nothing ran, so this status proves nothing about the command.",
			res.ExitCode, res.GuardDiagnostic)
	case res.TimedOut && res.Killed:
		return fmt.Sprintf("Timed out after %s: the command's whole process group was stopped (SIGTERM, then SIGKILL)%s. "+
			"The outcome is unknown and its effects may be partial: inspect what it was changing before doing anything else, and do not simply run it again. "+
			"For a longer run pass a larger timeoutMs (at most %d) or background: true.", timeout, stoppedStatus(res), MaxShellTimeout.Milliseconds())
	case res.Cancelled && (res.Killed || res.Unsettled):
		return "Cancelled: the outcome is unknown. The call was interrupted before the command settled, so it judged nothing" + stoppedStatus(res) +
			", and what it had already changed cannot be read from this result. Inspect the state it was changing before deciding whether to run it again."
	case res.ExitedBeforeCancel && res.HasExitCode:
		return fmt.Sprintf("Exit code %d. (The call was cancelled after the command had already exited: its own status stands.)", res.ExitCode)
	case res.HasExitCode:
		return "Exit code " + strconv.Itoa(res.ExitCode) + "."
	case res.Signal != "":
		return "Killed by signal " + res.Signal + ": no exit code, and no verdict on the work."
	}
	return "The command ended without an exit status."
}

// stoppedStatus names the status a stopped command left behind, which proves nothing.
func stoppedStatus(res shell.Result) string {
	switch {
	case res.HasExitCode:
		return fmt.Sprintf(" (recorded exit code %d, which proves nothing)", res.ExitCode)
	case res.Signal != "":
		return " (recorded: killed by " + res.Signal + ")"
	}
	return ""
}

// background hands the command to the host's BackgroundStarter. Its writes are not
// observed: it is still running when the call returns (a command promoted to the background
// is not reported in writtenPaths; see docs/tools.md).
func (t *shellTool) background(ctx context.Context, inv tools.Invocation, a shellArgs) tools.Result {
	if t.s.cfg.Background == nil {
		return tools.Result{Outcome: tools.OutcomeError, ErrorCode: string(CodeUnavailable),
			Output: "shell: background commands are not available in this session; nothing was run. " +
				"Run it in the foreground (leave background out), with a timeoutMs of up to 600000 if it is long."}
	}
	dir, err := t.s.resolveDir(a.Workdir)
	if err != nil {
		return failure(tools.NameShell, err, true)
	}
	policy := shell.ExitPolicy(a.ExitPolicy)
	if policy == "" {
		policy = shell.PolicyPipefail
	}
	session := inv.SessionID
	if session == "" {
		session = t.s.cfg.SessionID
	}
	id, err := t.s.cfg.Background.StartBackground(ctx, BackgroundRequest{Command: a.Command, Dir: dir,
		ExitPolicy: policy, SessionID: session, CallID: inv.CallID})
	if err != nil {
		code := string(CodeBackgroundFailed)
		if c := domain.CodeOf(err); c != "" {
			code = c
		}
		return tools.Result{Outcome: tools.OutcomeError, ErrorCode: code,
			Output: "shell: the background command could not be started: " + err.Error()}
	}
	q := strconv.Quote(id)
	out := fmt.Sprintf("Started in the background as task %s (in %s). It keeps running after this call and this turn, until it ends, is cancelled or this Zuno process exits; its completion is recorded in the session and later turns read it with bg. Files it writes are not reported here.\n"+
		"Read its latest output with bg {\"action\": \"output\", \"taskID\": %s}, wait for it to finish with bg {\"action\": \"wait\", \"taskID\": %s} "+
		"(at most 60 s per call), or stop it with bg {\"action\": \"cancel\", \"taskID\": %s}.",
		q, t.s.relOr(dir), q, q, q)
	return completed(out, tools.Metadata{Details: details(map[string]any{
		"background": true, "taskID": id, "workdir": t.s.relOr(dir), "exitPolicy": string(policy)})})
}

// resolveDir resolves a workdir argument the way the shell adapter does for a foreground
// command: relative to the root, symbolic links followed, an existing directory inside the
// root. The BackgroundStarter gets the absolute result, so it needs no root of its own.
func (s *Set) resolveDir(dir string) (string, error) {
	if dir == "" {
		return s.realRoot, nil
	}
	p := dir
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.realRoot, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", &shell.Error{Code: shell.CodeInvalidArguments, Msg: fmt.Sprintf("workdir %q does not exist", dir), Err: err}
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", &shell.Error{Code: shell.CodeInvalidArguments, Msg: fmt.Sprintf("workdir %q is not a directory", dir), Err: err}
	}
	if _, ok := s.rel(real); !ok {
		return "", &shell.Error{Code: shell.CodeInvalidArguments, Msg: fmt.Sprintf("workdir %q is outside the workspace root", dir)}
	}
	return real, nil
}

// rel turns an absolute path inside the workspace into the root-relative, slash-separated
// form every writtenPaths entry has. Either spelling of the root is accepted.
func (s *Set) rel(abs string) (string, bool) {
	for _, root := range []string{s.realRoot, s.root} {
		r, err := filepath.Rel(root, abs)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
			continue
		}
		return filepath.ToSlash(r), true
	}
	return "", false
}

// relOr is rel for display: the path itself when it is outside the root.
func (s *Set) relOr(abs string) string {
	if r, ok := s.rel(abs); ok {
		return r
	}
	return abs
}
