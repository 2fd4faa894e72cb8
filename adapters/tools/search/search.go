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
//   - Symbolic links are not followed during traversal (rg's default); an explicit path
//     that resolves outside the workspace root is refused.
//
// Results are root-relative, slash-separated paths that name real files. Files whose
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
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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
	feat     *Features

	// started, when set (tests), sees the pid of every rg started for a search.
	started func(pid int)
}

// New returns a Searcher for the workspace at root. It does not look for rg: discovery is
// lazy, so a machine without rg still starts; Probe reports on rg explicitly.
func New(root string) (*Searcher, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	s := &Searcher{Root: abs}
	if _, err := s.root(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Searcher) root() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.realRoot != "" {
		return s.realRoot, nil
	}
	if s.Root == "" {
		return "", errors.New("search: no workspace root")
	}
	abs, err := filepath.Abs(s.Root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("search: workspace root: %w", err)
	}
	if fi, err := os.Stat(real); err != nil {
		return "", fmt.Errorf("search: workspace root: %w", err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("search: workspace root %s is not a directory", s.Root)
	}
	s.realRoot = real
	return real, nil
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

// target is a validated search path.
type target struct {
	dir   string // working directory for rg: the searched directory, or the root for a file
	arg   string // the path argument rg gets ("." or "./<file>")
	rel   string // root-relative, slash-separated prefix for rg's output ("" for the root)
	isDir bool
}

// resolve validates a tool's path argument: inside the root after resolving symbolic
// links, existing and readable, a directory or a regular file. "Does not exist" and
// "cannot be read" are deliberately the same answer.
func (s *Searcher) resolve(p string) (target, error) {
	root, err := s.root()
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
	cand := filepath.Join(root, p)
	if filepath.IsAbs(p) {
		cand = filepath.Clean(p)
	}
	// Lexically outside the root (either spelling of it): refuse before touching the file system.
	given, _ := filepath.Abs(s.Root)
	if !within(root, cand) && !within(given, cand) {
		return target{}, invalid("path", "path %q is outside the workspace root %s", shown, s.Root)
	}
	notFound := invalid("path", "path %q does not exist or cannot be read", shown)
	real, err := filepath.EvalSymlinks(cand)
	if err != nil {
		notFound.Err = err
		return target{}, notFound
	}
	if !within(root, real) {
		return target{}, invalid("path", "path %q resolves outside the workspace root %s", shown, s.Root)
	}
	fi, err := os.Stat(real)
	if err != nil {
		notFound.Err = err
		return target{}, notFound
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return target{}, err
	}
	rel = filepath.ToSlash(rel)
	if !utf8.ValidString(rel) {
		return target{}, invalid("path", "path %q is not valid UTF-8", shown)
	}
	switch {
	case fi.IsDir():
		f, err := os.Open(real)
		if err == nil {
			_, err = f.Readdirnames(1)
			f.Close()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			notFound.Err = err
			return target{}, notFound
		}
		if rel == "." {
			rel = ""
		}
		return target{dir: real, arg: ".", rel: rel, isDir: true}, nil
	case fi.Mode().IsRegular():
		f, err := os.Open(real)
		if err != nil {
			notFound.Err = err
			return target{}, notFound
		}
		f.Close()
		return target{dir: root, arg: "./" + filepath.FromSlash(rel)}, nil
	default:
		return target{}, invalid("path", "path %q is not a regular file or a directory", shown)
	}
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// name turns one path rg printed (relative to the target's directory) into a root-relative
// identifier. ok is false when the name is not valid UTF-8.
func (t target) name(raw []byte) (string, bool) {
	raw = bytes.TrimPrefix(raw, []byte("./"))
	if filepath.Separator == '\\' {
		raw = bytes.TrimPrefix(raw, []byte(`.\`))
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	n := filepath.ToSlash(string(raw))
	if !t.isDir || t.rel == "" {
		return n, true
	}
	return t.rel + "/" + n, true
}

// run starts rg with args in dir and feeds its stdout, split at delim into records of at most
// MaxRecordBytes, to each. Longer records are skipped, and counted when counts (given the
// record's first bytes) says they held a result. It returns rg's exit code and standard
// error; cancelling ctx kills rg.
func (s *Searcher) run(ctx context.Context, dir string, args []string, delim byte, each func([]byte), counts func(head []byte) bool) (runStats, error) {
	f, err := s.Probe(ctx)
	if err != nil {
		return runStats{}, err
	}
	cmd := exec.CommandContext(ctx, f.Path, args...)
	cmd.Dir = dir
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
