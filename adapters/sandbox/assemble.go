package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// Request is what one shell assembly is for.
type Request struct {
	// ReadOnlyAgent: the agent's contract is read-only.
	ReadOnlyAgent bool
	// Workspace is the session's workspace root.
	Workspace string
	// Platform is a GOOS value; "" is this process's.
	Platform string
	// WorkspaceGone: the workspace no longer exists and the session is replayed
	// (docs/replay.md, "A workspace that is gone"). The sandbox is resolved as for a run, so
	// the shell is offered as it was, but no launcher is built over the missing directory:
	// every command is refused.
	WorkspaceGone bool
	// Own are Zuno's own files as the host resolved them: protected (most hidden) in every
	// mode, with the defaults and sandbox.protectedPaths (sandbox.Protections). Assemble adds
	// git's places (GitPaths) for the workspace and Own.Repository.
	Own sandbox.Locations
}

// Protection is one protected path (sandbox.Protections), named here for the hosts that
// print it.
type Protection = sandbox.Protection

// Session is an assembled shell's sandbox: the recorded resolution and the launcher every
// shell and background command of the session goes through.
type Session struct {
	Resolution sandbox.Resolution `json:"resolution"`
	Launcher   Launcher           `json:"-"`
	// Probe is the backend probe's answer when one was needed (nil when the resolution
	// skipped probing).
	Probe *Status `json:"probe,omitempty"`
	// Protected is the one list of protected paths: the launcher mounts it and the file
	// tools are given it, so both doors enforce the same paths. It is set even when the
	// shell is refused (the file tools still need it).
	Protected []sandbox.Protection `json:"protected"`
	// Unenforced, when the resolution is not confined, says which protections the OS does
	// not enforce for the shell: the host says it once at the start of a turn.
	Unenforced string `json:"unenforced,omitempty"`
	// GitNotes say what the look at git's places could not read (protected conservatively)
	// or cut short (a bound reached): debug sandbox shows them (docs/sandbox.md, "Where git
	// is pointed").
	GitNotes []string `json:"gitNotes,omitempty"`
	// GitWarning is the part of GitNotes the host says at the start of a turn: what is not
	// protected because a bound was reached. Empty when nothing was cut short.
	GitWarning string `json:"gitWarning,omitempty"`
}

// Assemble resolves the session's sandbox: it probes the backend only when the resolver
// needs it, resolves, and builds the launcher. An error means the shell is not assembled and
// nothing may run: a *sandbox.Refusal (its message is written for the user), a typed config
// error, or an invalid path of a confined resolution (never a fallback).
func Assemble(ctx context.Context, cfg sandbox.Config, req Request, probe Probe) (Session, error) {
	platform := req.Platform
	if platform == "" {
		platform = runtime.GOOS
	}
	dreq := sandbox.Request{ReadOnlyAgent: req.ReadOnlyAgent, Platform: platform}
	var scan GitScan
	if !req.WorkspaceGone {
		// Gathered per assembly, so a repository the user changed since is seen as it is now.
		scan = ScanGit(req.Workspace, req.Own.Repository)
		req.Own.Git = append(req.Own.Git, scan.Paths...)
	}
	sess := Session{Protected: sandbox.Protections(cfg, req.Own), GitNotes: append(scan.Warnings, scan.Notes...), GitWarning: strings.Join(scan.Warnings, "; ")}
	if sandbox.NeedsProbe(cfg, dreq) {
		st := probe.Check(ctx)
		sess.Probe = &st
		dreq.Availability = st.Availability()
	}
	res, err := sandbox.Resolve(cfg, dreq)
	if err != nil {
		return sess, err
	}
	sess.Resolution = res
	if res.ResolutionKind != sandbox.KindConfined {
		sess.Launcher = Native{}
		sess.Unenforced = sandbox.UnenforcedNotice(res, sess.Protected)
		return sess, nil
	}
	if req.WorkspaceGone {
		sess.Launcher = goneLauncher{workspace: req.Workspace}
		return sess, nil
	}
	b, err := NewBubblewrap(sess.Probe.Launcher, res, req.Workspace, sess.Protected)
	var serr *SeccompError
	if errors.As(err, &serr) {
		return sess, &sandbox.Refusal{Reason: sandbox.Reason{Code: sandbox.ReasonSeccomp, Text: err.Error()},
			RequestedMode: res.RequestedMode, Platform: platform}
	}
	if err != nil {
		// Invalid sandbox paths fail closed: the fallback is never taken for them.
		return sess, &sandbox.Refusal{Reason: sandbox.Reason{Code: sandbox.ReasonInvalidConfig, Text: err.Error()},
			RequestedMode: res.RequestedMode, Platform: platform}
	}
	sess.Launcher = b
	return sess, nil
}

// goneLauncher confines nothing because it runs nothing: the workspace is gone.
type goneLauncher struct{ workspace string }

func (l goneLauncher) Wrap([]string, string) ([]string, error) {
	return nil, fmt.Errorf("sandbox: the workspace %s no longer exists; nothing runs in a replay over it", l.workspace)
}

// Execution is the executionReady check: whether the selected backend can run a command.
// Under a native resolution it can be true while Status.Ready is false; the two are
// different conclusions.
type Execution struct {
	ExecutionReady bool               `json:"executionReady"`
	ResolutionKind sandbox.Kind       `json:"resolutionKind"`
	Argv           []string           `json:"argv,omitempty"`
	Error          string             `json:"error,omitempty"`
	Resolution     sandbox.Resolution `json:"resolution"`
}

// CheckExecution runs `bash -c true` in dir through the session's launcher.
func CheckExecution(ctx context.Context, sess Session, dir string) Execution {
	ex := Execution{ResolutionKind: sess.Resolution.ResolutionKind, Resolution: sess.Resolution}
	if sess.Launcher == nil {
		ex.Error = "no launcher: the shell was not assembled"
		return ex
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		ex.Error = "bash is not available: " + err.Error()
		return ex
	}
	var argv []string
	var files []*os.File
	if fl, ok := sess.Launcher.(FileLauncher); ok {
		argv, files, err = fl.WrapFiles([]string{bash, "-c", "true"}, dir)
	} else {
		argv, err = sess.Launcher.Wrap([]string{bash, "-c", "true"}, dir)
	}
	defer closeFiles(files)
	if err != nil {
		ex.Error = err.Error()
		return ex
	}
	ex.Argv = argv
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.ExtraFiles = files
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		ex.Error = fmt.Sprintf("%v: %s", err, firstLine(out.String()))
		return ex
	}
	ex.ExecutionReady = true
	return ex
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
