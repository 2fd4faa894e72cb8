package toolset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/tools"
)

func TestShellExitStatus(t *testing.T) {
	s, _ := newSet(t)
	r := call(t, s, tools.NameShell, `{"command":"echo hi; echo err >&2"}`)
	want(t, r, tools.OutcomeCompleted, "")
	if r.Output != "Exit code 0.\n[verification "+r.Metadata.Verification+"] passed, authoritative\nhi\nerr\n" {
		t.Errorf("output %q", r.Output)
	}
	// A command that ran and failed is a completed call; the status is a fact of it.
	r = call(t, s, tools.NameShell, `{"command":"echo partial; exit 3"}`)
	want(t, r, tools.OutcomeCompleted, "")
	f := facts(t, r)
	if f["exitCode"] != 3.0 || f["authoritative"] != true || f["timedOut"] != false || !strings.HasPrefix(r.Output, "Exit code 3.") {
		t.Errorf("%v\n%s", f, r.Output)
	}
	// bash's own 127 is the command's failing status, not the guard's (only the guard's
	// report makes a reserved code the guard's).
	r = call(t, s, tools.NameShell, `{"command":"no-such-command-zuno"}`)
	if f := facts(t, r); f["exitCode"] != 127.0 || f["neverStarted"] != nil || !strings.HasPrefix(r.Output, "Exit code 127.\n") || !strings.Contains(r.Output, "not found") {
		t.Errorf("%v\n%s", f, r.Output)
	}
	r = call(t, s, tools.NameShell, `{"command":"false | true","exitPolicy":"last"}`)
	if f := facts(t, r); f["exitCode"] != 0.0 || f["exitPolicy"] != "last" {
		t.Errorf("exitPolicy last: %v", f)
	}
	r = call(t, s, tools.NameShell, `{"command":"false | true"}`)
	if f := facts(t, r); f["exitCode"] != 1.0 || f["exitPolicy"] != "pipefail" {
		t.Errorf("default pipefail: %v", f)
	}
	if r := call(t, s, tools.NameShell, `{"command":"true"}`); !strings.HasSuffix(r.Output, "(no output)") {
		t.Errorf("empty output: %q", r.Output)
	}
}

func TestShellWorkdir(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "sub/x", "")
	r := call(t, s, tools.NameShell, `{"command":"pwd","workdir":"sub"}`)
	real, _ := filepath.EvalSymlinks(filepath.Join(root, "sub"))
	if !strings.Contains(r.Output, real) || facts(t, r)["workdir"] != "sub" {
		t.Errorf("%s %v", r.Output, facts(t, r))
	}
	want(t, call(t, s, tools.NameShell, `{"command":"pwd","workdir":"missing"}`), tools.OutcomeError, "invalid_arguments")
	want(t, call(t, s, tools.NameShell, `{"command":"pwd","workdir":"/"}`), tools.OutcomeError, "invalid_arguments")
}

// TestShellTimeout: a timeout that kills a running command is an uncertain outcome (a
// timeout near a side effect may have left it half done; issue 9), with a status that says
// the effect may be partial.
func TestShellTimeout(t *testing.T) {
	s, root := newSet(t)
	r := call(t, s, tools.NameShell, `{"command":"echo started; touch half.txt; sleep 30; touch never.txt","timeoutMs":2500}`)
	want(t, r, tools.OutcomeUncertain, "timed_out")
	f := facts(t, r)
	if f["timedOut"] != true || f["killed"] != true || f["authoritative"] != false || f["timeoutMs"] != 2500.0 {
		t.Errorf("details %v", f)
	}
	if !strings.HasPrefix(r.Output, "Timed out after 2.5s") || !strings.Contains(r.Output, "partial") || !strings.Contains(r.Output, "started\n") {
		t.Errorf("output:\n%s", r.Output)
	}
	if !slices.Equal(r.Metadata.WrittenPaths, []string{"half.txt"}) {
		t.Errorf("writtenPaths %v", r.Metadata.WrittenPaths)
	}
	if _, err := os.Stat(filepath.Join(root, "never.txt")); !os.IsNotExist(err) {
		t.Error("the command went on after its timeout")
	}
}

func TestShellInterrupted(t *testing.T) {
	s, root := newSet(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the command is known to be running.
		for {
			if _, err := os.Stat(filepath.Join(root, "running")); err == nil {
				cancel()
				return
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r := callCtx(ctx, t, s, tools.NameShell, "int-1", `{"command":"touch running; sleep 30"}`)
	want(t, r, tools.OutcomeUncertain, "interrupted")
	if facts(t, r)["cancelled"] != true || !strings.HasPrefix(r.Output, "Cancelled: the outcome is unknown.") {
		t.Errorf("%v\n%s", facts(t, r), r.Output)
	}
	// A context that is already done runs nothing.
	r = callCtx(ctx, t, s, tools.NameShell, "int-2", `{"command":"touch ran"}`)
	want(t, r, tools.OutcomeCancelled, "cancelled")
	if _, err := os.Stat(filepath.Join(root, "ran")); !os.IsNotExist(err) {
		t.Error("a cancelled call ran its command")
	}
}

// TestShellWithheld: output over the caps is stored as the raw bytes the command wrote
// (here not valid UTF-8), the exit code stays on the result, and a second call with the
// same call id never overwrites the first artifact.
func TestShellWithheld(t *testing.T) {
	s, _ := newSet(t)
	cmd := `for i in $(seq 1 3000); do printf 'line %d \377\n' "$i"; done; exit 5`
	var expected bytes.Buffer
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&expected, "line %d \xff\n", i)
	}
	r := callID(t, s, tools.NameShell, "big", args("command", cmd))
	want(t, r, tools.OutcomeCompleted, "")
	w := r.Metadata.WithheldOutput
	if w == nil || w.Limit != "max_lines" || w.Lines != 3000 || w.Bytes != int64(expected.Len()) || w.MaxLines != DefaultMaxLines {
		t.Fatalf("withheld %+v", w)
	}
	stored, err := os.ReadFile(w.Path)
	if err != nil || !bytes.Equal(stored, expected.Bytes()) {
		t.Fatalf("artifact is not the raw output (%v, %d bytes)", err, len(stored))
	}
	if filepath.Base(w.Path) != "big-shell.out" || !slices.Equal(r.Metadata.OutputPaths, []string{w.Path}) {
		t.Errorf("paths %s %v", w.Path, r.Metadata.OutputPaths)
	}
	if f := facts(t, r); f["exitCode"] != 5.0 || f["totalBytes"] != float64(expected.Len()) {
		t.Errorf("details %v", f)
	}
	for _, part := range []string{"Exit code 5.", "3000 lines", "tool_output.max_lines (2000 lines)", w.Path, `"action": "artifact"`, "Do not rerun"} {
		if !strings.Contains(r.Output, part) {
			t.Errorf("notice lacks %q:\n%s", part, r.Output)
		}
	}
	if strings.Contains(r.Output, "line 1 ") {
		t.Error("withheld output is inline")
	}

	again := callID(t, s, tools.NameShell, "big", `{"command":"seq 1 5000"}`)
	w2 := again.Metadata.WithheldOutput
	if w2 == nil || w2.Path == w.Path || filepath.Base(w2.Path) != "big-shell-2.out" {
		t.Fatalf("second artifact %+v", w2)
	}
	if now, _ := os.ReadFile(w.Path); !bytes.Equal(now, expected.Bytes()) {
		t.Fatal("the first artifact was overwritten")
	}
}

// TestShellWithheldSpooled: output over the byte cap is spooled to the artifact directory as
// it arrives and kept from there (never held in memory whole; issue 14): the artifact holds
// every byte, a second call with the same id gets the next name, and no spool is left over.
func TestShellWithheldSpooled(t *testing.T) {
	s, _ := newSet(t)
	cmd := `yes 0123456789 | head -c 300000; echo tail >&2`
	expected := append(bytes.Repeat([]byte("0123456789\n"), 300000/11), []byte("01234567")...) // 300000 = 27272*11 + 8
	expected = append(expected, "tail\n"...)
	var paths []string
	for range 2 {
		r := callID(t, s, tools.NameShell, "huge", args("command", cmd))
		want(t, r, tools.OutcomeCompleted, "")
		w := r.Metadata.WithheldOutput
		if w == nil || w.Limit != "max_bytes" || w.Bytes != int64(len(expected)) || w.Lines != 300000/11+1 {
			t.Fatalf("withheld %+v", w)
		}
		if stored, err := os.ReadFile(w.Path); err != nil || !bytes.Equal(stored, expected) {
			t.Fatalf("artifact is not the whole output (%v, %d bytes)", err, len(stored))
		}
		if !strings.Contains(r.Output, fmt.Sprintf("(%d bytes)", len(expected))) {
			t.Errorf("notice lacks the size on disk:\n%s", r.Output)
		}
		paths = append(paths, filepath.Base(w.Path))
	}
	ents, err := os.ReadDir(s.art.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(paths, []string{"huge-shell.out", "huge-shell-2.out"}) || !slices.Equal(names, []string{"huge-shell-2.out", "huge-shell.out"}) {
		t.Fatalf("artifacts %v, directory %v", paths, names)
	}
}

func TestShellWrittenPaths(t *testing.T) {
	s, root := newSet(t)
	put(t, root, "f.txt", "aaa\n")
	put(t, root, "sub/keep.txt", "k\n")
	call(t, s, tools.NameRead, `{"path":"f.txt"}`)

	r := call(t, s, tools.NameShell, `{"command":"sed -i 's/a/b/g' f.txt"}`)
	if !slices.Equal(r.Metadata.WrittenPaths, []string{"f.txt"}) || !strings.Contains(r.Output, "Files observed changed: f.txt") {
		t.Fatalf("sed -i: %v\n%s", r.Metadata.WrittenPaths, r.Output)
	}
	// The model has not seen what sed wrote: replacing the file needs a new read.
	want(t, call(t, s, tools.NameWrite, args("path", "f.txt", "content", "x\n")), tools.OutcomeError, "read_required")

	r = call(t, s, tools.NameShell, `{"command":"cp f.txt g.txt && echo redirected > r.txt","workdir":"."}`)
	if !slices.Equal(r.Metadata.WrittenPaths, []string{"g.txt"}) {
		t.Errorf("cp and redirect: %v (redirect targets are not reported)", r.Metadata.WrittenPaths)
	}
	r = call(t, s, tools.NameShell, `{"command":"touch new.txt keep.txt","workdir":"sub"}`)
	if !slices.Equal(r.Metadata.WrittenPaths, []string{"sub/keep.txt", "sub/new.txt"}) {
		t.Errorf("in workdir: %v", r.Metadata.WrittenPaths)
	}
	r = call(t, s, tools.NameShell, `{"command":"rm g.txt; cat f.txt"}`)
	if len(r.Metadata.WrittenPaths) != 0 {
		t.Errorf("deletion or read reported as a write: %v", r.Metadata.WrittenPaths)
	}
}

func TestWatchPaths(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{`sed -i 's/foo/bar/' src/lib.rs`, []string{"sed", "s/foo/bar/", "src/lib.rs"}},
		{`cp a.txt "b c.txt" && mv x\ y.txt z.txt`, []string{"cp", "a.txt", "b c.txt", "mv", "x y.txt", "z.txt"}},
		{`touch $OUT "$DIR/x" *.rs $(ls) ~/x f[12].go {a,b}.txt`, []string{"touch"}},
		{"touch $(printf %s sub.txt) `cat list.txt` $(a $(b c.txt)) d.txt", []string{"touch", "d.txt"}},
		{`echo hi > out.txt 2>err.log; cat < in.txt >> app.log`, []string{"echo", "hi", "cat"}},
		{`go build -o bin/app --tags=x ./cmd`, []string{"go", "build", "bin/app", "./cmd"}},
		{"cat <<EOF > f.txt\nhello.txt\nEOF\ntouch after.txt", []string{"cat"}},
		{`grep x <<< "word.txt" file.txt`, []string{"grep", "x", "file.txt"}},
		{"FOO=1 make all # touch comment.txt\ntouch real.txt", []string{"make", "all", "touch", "real.txt"}},
		{`cmd 2>&1 | tee log.txt`, []string{"cmd", "tee", "log.txt"}},
		{`echo 'unterminated`, []string{"echo"}},
		{`curl https://example.com/x . ..`, []string{"curl"}},
	} {
		if got := watchPaths(tc.cmd); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
	var many strings.Builder
	for i := range 200 {
		fmt.Fprintf(&many, "f%d ", i)
	}
	if n := len(watchPaths(many.String())); n != maxWatchPaths {
		t.Errorf("%d paths watched, want the bound %d", n, maxWatchPaths)
	}
}

func TestShellBackgroundUnavailable(t *testing.T) {
	s, root := newSet(t)
	r := call(t, s, tools.NameShell, `{"command":"touch bg.txt","background":true}`)
	want(t, r, tools.OutcomeError, "unavailable")
	if _, err := os.Stat(filepath.Join(root, "bg.txt")); !os.IsNotExist(err) {
		t.Error("the command ran")
	}
}

// execStarter is a real BackgroundStarter: it starts bash with os/exec and reports the
// process's end on done.
type execStarter struct {
	got  BackgroundRequest
	done chan error
	fail error
}

func (e *execStarter) StartBackground(ctx context.Context, req BackgroundRequest) (string, error) {
	if e.fail != nil {
		return "", e.fail
	}
	e.got = req
	cmd := exec.Command("bash", "-o", string(req.ExitPolicy), "-c", req.Command)
	cmd.Dir = req.Dir
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go func() { e.done <- cmd.Wait() }()
	return fmt.Sprintf("task-%d", cmd.Process.Pid), nil
}

func TestShellBackground(t *testing.T) {
	starter := &execStarter{done: make(chan error, 1)}
	s, root := newSet(t, func(c *Config) { c.Background = starter })
	put(t, root, "sub/.keep", "")
	r := callID(t, s, tools.NameShell, "bg-call", `{"command":"echo from-bg > out.txt","workdir":"sub","background":true}`)
	want(t, r, tools.OutcomeCompleted, "")
	if err := <-starter.done; err != nil {
		t.Fatalf("background command: %v", err)
	}
	if got := get(t, root, "sub/out.txt"); got != "from-bg\n" {
		t.Fatalf("background output %q", got)
	}
	realSub, _ := filepath.EvalSymlinks(filepath.Join(root, "sub"))
	if starter.got.Dir != realSub || starter.got.CallID != "bg-call" || starter.got.SessionID != testSession || starter.got.ExitPolicy != "pipefail" {
		t.Errorf("request %+v", starter.got)
	}
	f := facts(t, r)
	id, _ := f["taskID"].(string)
	if !strings.HasPrefix(id, "task-") || f["background"] != true {
		t.Fatalf("details %v", f)
	}
	for _, part := range []string{id, `"action": "output"`, `"action": "wait"`, `"taskID"`} {
		if !strings.Contains(r.Output, part) {
			t.Errorf("output lacks %q:\n%s", part, r.Output)
		}
	}
	if len(r.Metadata.WrittenPaths) != 0 {
		t.Errorf("a background command reported writes: %v", r.Metadata.WrittenPaths)
	}
	if d := toolNamed(t, s, tools.NameShell).Declaration(); d.Policy != (tools.Policy{}) {
		t.Errorf("shell policy %+v", d.Policy)
	}

	starter.fail = errors.New("no slots")
	want(t, call(t, s, tools.NameShell, `{"command":"true","background":true}`), tools.OutcomeError, "background_failed")
	starter.fail = nil
	want(t, call(t, s, tools.NameShell, `{"command":"true","background":true,"workdir":"nope"}`), tools.OutcomeError, "invalid_arguments")
}
