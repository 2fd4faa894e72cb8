// Package search executes the glob and grep tools over the system ripgrep (rg).
//
// Zuno contributes typed arguments, cancellation, bounded decoding, a stable order and path
// validation; the traversal, the ignore rules and the pattern languages are ripgrep's own:
//
//   - glob's pattern and grep's include are rg --glob globs (gitignore syntax), matched
//     relative to the searched directory: a glob without "/" matches a name at any depth.
//     As with rg, a glob overrides the ignore and hidden rules for what it matches: "*.log"
//     lists git-ignored logs, and "*" (which matches directories too) descends into
//     ignored and hidden directories.
//   - grep's pattern is an rg regular expression (Rust regex syntax), one line at a time.
//   - Hidden files and directories are skipped and ignore files (.gitignore inside a Git
//     work tree, .ignore, .rgignore) are honoured, as rg does by default. Zuno adds one
//     rule: the .git directory itself is never searched or listed.
//   - The searched path is reached by handle (docs/tools.md, "Path authority"): named as the
//     permission gate names it (a final symbolic link followed once, a link on the way
//     refused, a target outside the workspace refused), then opened beneath the root through
//     a held handle with no link followed, and rg is started on that open directory
//     (/proc/self/fd/N as its working directory) or file, never on a path string it would
//     resolve again. rg follows no symbolic link while it walks (its default; -L is never
//     passed), and every returned result is checked, again from the handle rg was given, to
//     lie beneath it before it is shown: a name must be a regular file there, and a grep
//     line must be that file's line. What fails the check (a directory on the way was
//     swapped for a link while rg walked it) is left out and counted (Result.Outside).
//     Found counts what rg reported past the returned results unchecked.
//
// Results are root-relative, slash-separated paths that name regular files. Files whose
// names are not valid UTF-8 are excluded and counted, never reported with replacement
// characters. Results are sorted by path (and line), then cut at the request's limit; any
// dropped result marks the output as truncated.
//
// rg is discovered lazily, on the first glob or grep, and a missing or unusable rg is a
// typed "unavailable" error for those two tools only.
package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/zuno-run/zuno/adapters/tools/files"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
)

// Defaults and bounds. The output caps are the tool_output defaults (see "Output caps and
// artifacts" in docs/tools.md).
const (
	DefaultMaxBytes = 51200 // tool_output.max_bytes
	DefaultMaxLines = 2000  // tool_output.max_lines
	DefaultLimit    = 100   // results returned when a request names no limit
	MaxContext      = 50    // grep context lines are clamped to this

	// MaxLineUnits is the longest matched line returned, in UTF-16 code units.
	MaxLineUnits = 2000
	// MaxRecordBytes is the longest rg output record decoded; longer records are skipped.
	MaxRecordBytes = 1 << 20
	// MaxRunBytes is the most rg output one call reads. A run that prints more is refused:
	// a stable order cannot be chosen from part of a parallel traversal.
	MaxRunBytes = 64 << 20
)

// Code is the blocking category of a refused call, as recorded on the dispatch-blocked event.
type Code string

const (
	// InvalidArguments: a bad pattern or include, a path outside the workspace or unreadable,
	// or a run whose output is too large to order.
	InvalidArguments Code = "invalid_arguments"
	// Unavailable: rg is missing or lacks a feature the tools need.
	Unavailable Code = "unavailable"
)

// Error is a refused call: nothing was searched, and the message is meant for the model.
type Error struct {
	Code Code
	// Field names the argument at fault: "pattern", "include", "path" or "".
	Field   string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: InvalidArguments, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Features is what the probe found out about rg.
type Features struct {
	Path    string // the executable that runs
	Version string // first line of rg --version, for diagnostics only
}

// Searcher runs glob and grep inside one workspace root. The zero values of RG, MaxBytes and
// MaxLines mean "rg" on PATH and the default output caps. A Searcher is safe for concurrent
// use; its fields must not change after the first call.
type Searcher struct {
	Root     string // workspace root; every searched path must resolve inside it
	RG       string // rg executable: a path, or a name looked up in PATH
	MaxBytes int    // tool_output.max_bytes
	MaxLines int    // tool_output.max_lines

	mu       sync.Mutex
	realRoot string
	// ws holds the handle on realRoot every searched path is opened from (package files,
	// the same walk as the file tools).
	ws   *files.Workspace
	feat *Features

	// started, when set (tests), sees the pid of every rg started for a search.
	started func(pid int)
	// opened, when set (tests), runs after the searched path was opened and before rg starts:
	// the window a name-based search would lose to a swap.
	opened func(rel string)
}

// New returns a Searcher for the workspace at root. It does not look for rg: discovery is
// lazy, so a machine without rg still starts; Probe reports on rg explicitly.
func New(root string) (*Searcher, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	s := &Searcher{Root: abs}
	if _, _, err := s.workspace(); err != nil {
		return nil, err
	}
	return s, nil
}

// workspace opens the handle on the root once and returns it with the root's resolved path
// (the spelling every target the gate names is relative to).
func (s *Searcher) workspace() (*files.Workspace, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ws != nil {
		return s.ws, s.realRoot, nil
	}
	if s.Root == "" {
		return nil, "", errors.New("search: no workspace root")
	}
	ws, err := files.New(s.Root)
	if err != nil {
		return nil, "", fmt.Errorf("search: %w", err)
	}
	a, _ := ws.Authorize(".") // the root itself: nothing to walk, nothing to refuse
	s.ws, s.realRoot = ws, a.Target
	return ws, a.Target, nil
}

// Protect gives the searcher the protected paths (the file tools' list): a search outside
// the workspace refuses a path, and leaves out the results, the agent may not read.
func (s *Searcher) Protect(list []sandbox.Protection) error {
	ws, _, err := s.workspace()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ws.Protected = list
	return nil
}

func (s *Searcher) maxBytes() int {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *Searcher) maxLines() int {
	if s.MaxLines > 0 {
		return s.MaxLines
	}
	return DefaultMaxLines
}

const installHint = "glob and grep need ripgrep 14 or newer: install it (apt-get install ripgrep, " +
	"dnf install ripgrep, brew install ripgrep, winget install BurntSushi.ripgrep.MSVC, " +
	"or cargo install ripgrep) and make sure rg is on PATH"

// Probe finds rg and checks, by running it, that it has the features glob and grep use:
// --files, --json, --null, --glob, --no-config, --no-messages, --no-ignore-messages,
// --context and --ignore-case, with the output shapes decoded here. A success is
// remembered; a failure is not, so installing rg needs no restart.
func (s *Searcher) Probe(ctx context.Context) (Features, error) {
	s.mu.Lock()
	if s.feat != nil {
		f := *s.feat
		s.mu.Unlock()
		return f, nil
	}
	s.mu.Unlock()

	f, err := probe(ctx, s.rgName())
	if err != nil {
		return Features{}, err
	}
	s.mu.Lock()
	s.feat = &f
	s.mu.Unlock()
	return f, nil
}

func (s *Searcher) rgName() string {
	if s.RG != "" {
		return s.RG
	}
	return "rg"
}

func unavailable(format string, args ...any) *Error {
	return &Error{Code: Unavailable, Message: fmt.Sprintf(format, args...) + "; " + installHint}
}

func probe(ctx context.Context, name string) (Features, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		e := unavailable("ripgrep (rg) was not found (looked for %q)", name)
		e.Err = err
		return Features{}, e
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Features{}, ctxErr
	}
	if err != nil || !bytes.HasPrefix(out, []byte("ripgrep ")) {
		e := unavailable("%s does not run as ripgrep (rg --version failed)", path)
		e.Err = err
		return Features{}, e
	}
	f := Features{Path: path, Version: strings.TrimSpace(string(bytes.SplitN(out, []byte("\n"), 2)[0]))}

	dir, err := os.MkdirTemp("", "zuno-rg-probe-")
	if err != nil {
		return Features{}, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "probe.txt"), []byte("first\nZuno Probe\n"), 0o644); err != nil {
		return Features{}, err
	}
	lack := func(what string, detail []byte) (Features, error) {
		return Features{}, unavailable("%s (%s) lacks a feature glob/grep need (%s: %s)",
			path, f.Version, what, strings.TrimSpace(string(firstBytes(detail, 300))))
	}

	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append(globArgs("*.txt"), "--", ".")...)
	cmd.Dir, cmd.Stderr = dir, &stderr
	out, err = cmd.Output()
	if err != nil || string(out) != "./probe.txt\x00" {
		return lack("--files --null --glob", append(out, stderr.Bytes()...))
	}

	stderr.Reset()
	probeReq := GrepRequest{Pattern: "zuno probe", Include: "*.txt", CaseInsensitive: true, Context: 1}
	cmd = exec.CommandContext(ctx, path, append(grepArgs(probeReq), "--", ".")...)
	cmd.Dir, cmd.Stderr = dir, &stderr
	out, err = cmd.Output()
	if err != nil {
		return lack("--json --context --ignore-case", append(out, stderr.Bytes()...))
	}
	var sawMatch, sawContext bool
	var dec decoder
	for _, line := range bytes.Split(out, []byte("\n")) {
		r, ok, err := dec.decode(line)
		if err != nil {
			return lack("--json output", out)
		}
		if !ok {
			continue
		}
		name := string(r.Path)
		switch {
		case r.Type == "match" && name == "./probe.txt" && r.LineNumber == 2 && r.text() == "Zuno Probe":
			sawMatch = true
		case r.Type == "context" && name == "./probe.txt" && r.LineNumber == 1:
			sawContext = true
		}
	}
	if !sawMatch || !sawContext {
		return lack("--json output", out)
	}
	return f, nil
}

func firstBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// target is a validated search path, opened.
type target struct {
	f     *os.File // the searched directory or regular file, opened beneath the root
	rel   string   // its root-relative, slash-separated path ("" for the root); absolute outside
	isDir bool
	// hidden, for a target outside the workspace, says which results lie under a path the
	// agent may not read (Zuno's data under a granted home directory): they are left out.
	hidden func(abs string) bool
}

func (t target) close() { t.f.Close() }

// fileArg is how rg is given a file target: the open file passed as its descriptor 3.
const fileArg = "/proc/self/fd/3"

// rgArg is the path argument rg gets: "." in the opened directory, or the passed file.
func (t target) rgArg() string {
	if t.isDir {
		return "."
	}
	return fileArg
}

// resolve validates a tool's path argument and opens it. The path is named as the permission
// gate names it (files.Workspace.Authorize: a final symbolic link followed once, a link on
// the way refused) and must be inside the root; it is then opened beneath the root through
// the held handle with no link followed (files.Workspace.OpenBeneath), so a directory swapped
// for a link after the check is refused, not searched. It must exist and be readable, a
// directory or a regular file: "does not exist" and "cannot be read" are deliberately the
// same answer. The caller closes the target.
func (s *Searcher) resolve(p, externalRoot string) (target, error) {
	ws, root, err := s.workspace()
	if err != nil {
		return target{}, err
	}
	shown := p
	if p == "" || p == "." {
		p, shown = ".", "."
	}
	if strings.ContainsRune(p, 0) {
		return target{}, invalid("path", "path contains a NUL byte")
	}
	a, err := ws.Authorize(p)
	if err != nil {
		return target{}, pathRefused(shown, err)
	}
	if !a.Inside && externalRoot != "" {
		return s.resolveOutside(ws, p, shown, externalRoot)
	}
	if !a.Inside {
		if a.Symlink {
			return target{}, invalid("path", "path %q resolves outside the workspace root %s", shown, s.Root)
		}
		return target{}, invalid("path", "path %q is outside the workspace root %s", shown, s.Root)
	}
	rel, _ := filepath.Rel(root, a.Target) // Inside: a.Target is root or below it
	rel = filepath.ToSlash(rel)
	if !utf8.ValidString(rel) {
		return target{}, invalid("path", "path %q is not valid UTF-8", shown)
	}
	f, err := ws.OpenBeneath(nil, rel)
	if errors.Is(err, syscall.ELOOP) {
		return target{}, linkRefused(shown, err)
	}
	if err != nil {
		return target{}, notFound(shown, err)
	}
	if rel == "." {
		rel = ""
	}
	return s.checkOpened(target{f: f, rel: rel}, shown)
}

// resolveOutside opens a path outside the workspace under the directory an
// external_directory grant admitted, as read reaches it (files.Workspace.OpenIn): beneath
// the granted directory, no link followed, a protected path refused.
func (s *Searcher) resolveOutside(ws *files.Workspace, p, shown, externalRoot string) (target, error) {
	f, key, err := ws.OpenIn(p, externalRoot)
	if err != nil {
		var fe *files.Error
		if errors.As(err, &fe) && fe.Kind == files.SymlinkRefused {
			return target{}, linkRefused(shown, err)
		}
		var de *domain.Error
		if errors.As(err, &fe) || errors.As(err, &de) {
			return target{}, &Error{Code: InvalidArguments, Field: "path", Err: err, Message: err.Error()}
		}
		return target{}, notFound(shown, err)
	}
	if !utf8.ValidString(key) {
		f.Close()
		return target{}, invalid("path", "path %q is not valid UTF-8", shown)
	}
	return s.checkOpened(target{f: f, rel: key, hidden: ws.HiddenAt}, shown)
}

func notFound(shown string, err error) *Error {
	e := invalid("path", "path %q does not exist or cannot be read", shown)
	e.Err = err
	return e
}

// checkOpened checks what resolve opened: a readable directory or a regular file.
func (s *Searcher) checkOpened(t target, shown string) (target, error) {
	f := t.f
	if s.opened != nil {
		s.opened(t.rel)
	}
	missing := notFound(shown, nil)
	fi, err := f.Stat()
	switch {
	case err != nil:
		missing.Err = err
	case fi.IsDir():
		// Readable: a directory rg could not list would only come back empty.
		if _, err = f.Readdirnames(1); err == nil || errors.Is(err, io.EOF) {
			t.isDir = true
			return t, nil
		}
		missing.Err = err
	case fi.Mode().IsRegular():
		return t, nil
	default:
		f.Close()
		return target{}, invalid("path", "path %q is not a regular file or a directory", shown)
	}
	f.Close()
	return target{}, missing
}

// pathRefused turns the refusal of a path by files.Workspace.Authorize (the gate's naming of
// it) into the search's.
func pathRefused(shown string, err error) error {
	var fe *files.Error
	if errors.As(err, &fe) && fe.Kind == files.SymlinkRefused {
		return linkRefused(shown, err)
	}
	return &Error{Code: InvalidArguments, Field: "path", Err: err, Message: fmt.Sprintf("path %q cannot be searched: %v", shown, err)}
}

func linkRefused(shown string, err error) error {
	return &Error{Code: InvalidArguments, Field: "path", Err: err, Message: fmt.Sprintf(
		"path %q goes through a symbolic link, or leads to a link that is not followed again: glob and grep follow a link "+
			"only as the last segment of a path, once. Use the path the link points to", shown)}
}

// name turns one path rg printed into a root-relative identifier. ok is false when the name
// is not valid UTF-8.
func (t target) name(raw []byte) (string, bool) {
	if !t.isDir {
		return t.rel, true // rg was given one file; it prints only that one
	}
	raw = bytes.TrimPrefix(raw, []byte("./"))
	if !utf8.Valid(raw) {
		return "", false
	}
	n := string(raw)
	if t.rel == "" {
		return n, true
	}
	return t.rel + "/" + n, true
}

// run starts rg with args, then "--" and the target's argument, and feeds its stdout, split
// at delim into records of at most MaxRecordBytes, to each. Longer records are skipped, and
// counted when counts (given the record's first bytes) says they held a result. It returns
// rg's exit code and standard error; cancelling ctx kills rg.
//
// rg gets the open target, not its name: a directory becomes rg's working directory through
// /proc/self/fd/N (the child enters it before exec, while it still holds the descriptor), and
// a file is passed as descriptor 3 and named /proc/self/fd/3. Either way the kernel hands rg
// the object opened beneath the root, whatever its name leads to by now.
func (s *Searcher) run(ctx context.Context, t target, args []string, delim byte, each func([]byte), counts func(head []byte) bool) (runStats, error) {
	f, err := s.Probe(ctx)
	if err != nil {
		return runStats{}, err
	}
	if err := procFDs(); err != nil {
		return runStats{}, err
	}
	cmd := exec.CommandContext(ctx, f.Path, append(args, "--", t.rgArg())...)
	if t.isDir {
		cmd.Dir = "/proc/self/fd/" + strconv.Itoa(int(t.f.Fd()))
	} else {
		cmd.Dir = "/"
		cmd.ExtraFiles = []*os.File{t.f}
	}
	cmd.WaitDelay = 2 * time.Second
	stderr := &capped{max: 64 << 10}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return runStats{}, err
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			s.mu.Lock()
			s.feat = nil
			s.mu.Unlock()
			e := unavailable("ripgrep (rg) could not be started (%v)", err)
			e.Err = err
			return runStats{}, e
		}
		return runStats{}, err
	}
	if s.started != nil {
		s.started(cmd.Process.Pid)
	}
	st, readErr := readRecords(stdout, delim, each, counts)
	if readErr != nil {
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return st, ctxErr
	}
	if errors.Is(readErr, errTooLarge) {
		return st, invalid("", "rg printed more than %d MiB for this call, too much to order the results stably; narrow the pattern, the path or the include glob", MaxRunBytes>>20)
	}
	if readErr != nil {
		return st, fmt.Errorf("search: reading rg output: %w", readErr)
	}
	st.stderr = strings.TrimSpace(stderr.String())
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
		st.exit = 0
	case errors.As(waitErr, &exitErr) && exitErr.Exited():
		st.exit = exitErr.ExitCode()
	default:
		return st, fmt.Errorf("search: rg: %w", waitErr)
	}
	return st, nil
}

// procFDs checks once that /proc/self/fd names this process's descriptors, which is how rg
// is handed the opened target; without /proc mounted glob and grep are unavailable.
var procFDs = sync.OnceValue(func() error {
	fd, err := os.Open("/")
	if err != nil {
		return err
	}
	defer fd.Close()
	a, errA := os.Stat("/proc/self/fd/" + strconv.Itoa(int(fd.Fd())))
	b, errB := fd.Stat()
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		return &Error{Code: Unavailable, Err: errA, Message: "glob and grep hand rg the searched directory as " +
			"/proc/self/fd/N, and /proc/self/fd does not name this process's open files here: mount /proc"}
	}
	return nil
})

type runStats struct {
	exit    int
	stderr  string
	skipped int // results in records longer than MaxRecordBytes
	bytes   int64
}

var errTooLarge = errors.New("rg output exceeds the per-call bound")

var bufPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, MaxRecordBytes+1) }}

func readRecords(r io.Reader, delim byte, each func([]byte), counts func(head []byte) bool) (runStats, error) {
	br := bufPool.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() { br.Reset(nil); bufPool.Put(br) }()
	var st runStats
	for {
		rec, err := br.ReadSlice(delim)
		st.bytes += int64(len(rec))
		if st.bytes > MaxRunBytes {
			return st, errTooLarge
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			// An over-long record: see whether it held a result, and skip the rest of it.
			if counts == nil || counts(rec) {
				st.skipped++
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				rec, err = br.ReadSlice(delim)
				st.bytes += int64(len(rec))
				if st.bytes > MaxRunBytes {
					return st, errTooLarge
				}
			}
		} else if n := len(rec); err == nil && n > 1 {
			each(rec[:n-1])
		} else if errors.Is(err, io.EOF) && n > 0 {
			each(rec) // a last record without its delimiter
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return st, nil
		default:
			return st, err
		}
	}
}

// capped keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(firstBytes(p, room))
	}
	return len(p), nil
}

// rgError turns a failed rg run (exit 2 with a message) into a typed error. With
// --no-messages rg keeps per-path diagnostics to itself, so what it still prints is about
// the arguments: a regex it cannot compile, or a glob it cannot parse. globField names the
// argument that carries globs ("pattern" for glob, "include" for grep).
func rgError(st runStats, globField string) error {
	msg := st.stderr
	switch {
	case strings.Contains(msg, "error parsing glob"):
		return &Error{Code: InvalidArguments, Field: globField, Message: "invalid " + globField + " glob: " + msg}
	case globField == "include" && strings.Contains(strings.ToLower(msg), "regex"):
		return &Error{Code: InvalidArguments, Field: "pattern", Message: "invalid pattern: " + msg}
	}
	return fmt.Errorf("search: rg exited with status %d: %s", st.exit, msg)
}

// checkPattern refuses the patterns rg could not be given at all.
func checkPattern(pattern string) error {
	if pattern == "" {
		return invalid("pattern", "pattern is required")
	}
	if strings.ContainsRune(pattern, 0) {
		return invalid("pattern", "pattern contains a NUL byte")
	}
	return nil
}
