package toolset

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// setAt builds another Set over root, as a later `zuno run --session` process does.
func setAt(t testing.TB, root string) *Set {
	t.Helper()
	s, err := New(Config{Root: root, ArtifactDir: filepath.Join(t.TempDir(), "artifacts"), SessionID: testSession})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recorded is the settlement the turn driver records for r, passed through JSON as the
// event log stores and returns it.
func recorded(t testing.TB, name string, r tools.Result) events.ToolSettled {
	t.Helper()
	b, err := json.Marshal(events.ToolSettled{SessionID: testSession, TurnID: "turn-1", RequestID: "req-1",
		CallID: "call-rec", Tool: name, Outcome: string(r.Outcome), ErrorCode: r.ErrorCode, Output: r.Output,
		Metadata: r.Metadata, DurationMs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ev events.ToolSettled
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// restoreInto hands evs to s's tools as the driver does: each, in order, to the Restorer
// with its tool name.
func restoreInto(s *Set, evs ...events.ToolSettled) {
	for _, ev := range evs {
		for _, tl := range s.Tools() {
			if r, ok := tl.(tools.Restorer); ok && tl.Declaration().Name == ev.Tool {
				r.Restore(ev)
			}
		}
	}
}

// withDetail returns ev with one key of its details replaced, as a tampered log would hold.
func withDetail(t testing.TB, ev events.ToolSettled, key string, v any) events.ToolSettled {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Metadata.Details, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = v
	ev.Metadata.Details = details(m)
	return ev
}

const updateNotes = "*** Update File: notes.txt\n@@\n-hello\n+HELLO\n"

// TestRestoreAcrossProcesses is the reported case: turn 1 reads notes.txt, turn 2 runs in a
// new process and patches the unchanged file without reading it again.
func TestRestoreAcrossProcesses(t *testing.T) {
	a, root := newSet(t)
	put(t, root, "notes.txt", "hello\n")
	r := call(t, a, tools.NameRead, `{"path":"notes.txt"}`)
	want(t, r, tools.OutcomeCompleted, "")
	ev := recorded(t, tools.NameRead, r)

	unrestored := setAt(t, root)
	want(t, call(t, unrestored, tools.NameApplyPatch, args("patch", patchText(updateNotes))), tools.OutcomeError, "read_required")

	b := setAt(t, root)
	restoreInto(b, ev)
	want(t, call(t, b, tools.NameApplyPatch, args("patch", patchText(updateNotes))), tools.OutcomeCompleted, "")
	if get(t, root, "notes.txt") != "HELLO\n" {
		t.Fatal("the patch did not apply")
	}
}

func TestRestoreCases(t *testing.T) {
	type fixture struct {
		a             *Set
		root, outside string
	}
	cases := []struct {
		name string
		// turn1 runs the first process's calls and returns the settlements to restore.
		turn1 func(t *testing.T, f fixture) []events.ToolSettled
		// patch is what the second process sends (default: updateNotes).
		patch string
		// everyRestorer hands the settlements to every Restorer, not only the one with the
		// recorded tool name, as a driver that did not filter by name would.
		everyRestorer bool
		wantOutcome   tools.Outcome
		wantCode      string
		wantNotes     string
	}{
		{
			name: "file changed on disk between",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				r := call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`)
				put(t, f.root, "notes.txt", "hello\nchanged\n")
				return []events.ToolSettled{recorded(t, tools.NameRead, r)}
			},
			wantOutcome: tools.OutcomeError, wantCode: "stale_read", wantNotes: "hello\nchanged\n",
		},
		{
			name: "restored from a write result",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`)
				r := call(t, f.a, tools.NameWrite, args("path", "notes.txt", "content", "hello\nworld\n"))
				want(t, r, tools.OutcomeCompleted, "")
				return []events.ToolSettled{recorded(t, tools.NameWrite, r)}
			},
			wantOutcome: tools.OutcomeCompleted, wantNotes: "HELLO\nworld\n",
		},
		{
			name: "restored from a write that created the file",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				os.Remove(filepath.Join(f.root, "notes.txt"))
				r := call(t, f.a, tools.NameWrite, args("path", "notes.txt", "content", "hello\n"))
				want(t, r, tools.OutcomeCompleted, "")
				return []events.ToolSettled{recorded(t, tools.NameWrite, r)}
			},
			wantOutcome: tools.OutcomeCompleted, wantNotes: "HELLO\n",
		},
		{
			name: "restored from an apply_patch result: what it wrote counts as read",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`)
				r := call(t, f.a, tools.NameApplyPatch, args("patch", patchText("*** Update File: notes.txt\n@@\n-hello\n+hello\n+there\n")))
				want(t, r, tools.OutcomeCompleted, "")
				return []events.ToolSettled{recorded(t, tools.NameApplyPatch, r)}
			},
			wantOutcome: tools.OutcomeCompleted, wantNotes: "HELLO\nthere\n",
		},
		{
			name: "a patch it applied, resent, is an identical replay",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				r1 := call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`)
				r2 := call(t, f.a, tools.NameApplyPatch, args("patch", patchText("*** Update File: notes.txt\n@@\n hello\n+again\n")))
				want(t, r2, tools.OutcomeCompleted, "")
				return []events.ToolSettled{recorded(t, tools.NameRead, r1), recorded(t, tools.NameApplyPatch, r2)}
			},
			// The insertion would apply to its own result a second time.
			patch:       "*** Update File: notes.txt\n@@\n hello\n+again\n",
			wantOutcome: tools.OutcomeError, wantCode: "identical_replay", wantNotes: "hello\nagain\n",
		},
		{
			name: "a patch refused by content, resent, is an identical replay",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				r1 := call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`)
				r2 := call(t, f.a, tools.NameApplyPatch, args("patch", patchText("*** Update File: notes.txt\n@@\n-absent\n+x\n")))
				want(t, r2, tools.OutcomeError, "context_mismatch")
				return []events.ToolSettled{recorded(t, tools.NameRead, r1), recorded(t, tools.NameApplyPatch, r2)}
			},
			patch:       "*** Update File: notes.txt\n@@\n-absent\n+x\n",
			wantOutcome: tools.OutcomeError, wantCode: "identical_replay", wantNotes: "hello\n",
		},
		{
			name: "a deletion revokes, also when the same bytes come back",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				r1 := call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`)
				r2 := call(t, f.a, tools.NameApplyPatch, args("patch", patchText("*** Delete File: notes.txt\n")))
				want(t, r2, tools.OutcomeCompleted, "")
				put(t, f.root, "notes.txt", "hello\n")
				return []events.ToolSettled{recorded(t, tools.NameRead, r1), recorded(t, tools.NameApplyPatch, r2)}
			},
			wantOutcome: tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
		{
			name: "a result of another tool name",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				ev := recorded(t, tools.NameRead, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))
				ev.Tool = tools.NameGlob
				return []events.ToolSettled{ev}
			},
			everyRestorer: true,
			wantOutcome:   tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
		{
			name: "a non-completed outcome or a recovered settlement",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				ev := recorded(t, tools.NameRead, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))
				var out []events.ToolSettled
				for _, o := range []tools.Outcome{tools.OutcomeError, tools.OutcomeBlocked, tools.OutcomeUncertain, tools.OutcomeCancelled, "", "Completed"} {
					e := ev
					e.Outcome = string(o)
					out = append(out, e)
				}
				rec := ev
				rec.Recovered = true
				return append(out, rec)
			},
			wantOutcome: tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
		{
			name: "malformed details",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				ev := recorded(t, tools.NameRead, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))
				cred := facts(t, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))["credential"].(map[string]any)
				digest := cred["digest"].(string)
				var out []events.ToolSettled
				for _, d := range []string{
					``, `null`, `[]`, `"notes.txt"`, `{"path":"notes.txt","credential":`, `{"path":"notes.txt"}`,
					`{"path":1,"credential":{"digest":"` + digest + `","generation":0}}`,
					`{"path":"notes.txt","credential":{"digest":"sha256:` + strings.ToUpper(strings.TrimPrefix(digest, "sha256:")) + `","generation":0}}`,
					`{"path":"notes.txt","credential":{"digest":"sha256:` + strings.Repeat("0", 64) + `","generation":0}}`,
					`{"path":"notes.txt","credential":{"digest":"` + strings.TrimPrefix(digest, "sha256:") + `","generation":0}}`,
					`{"path":"notes.txt","credential":{"digest":"none","generation":0}}`,
					`{"path":"notes.txt","credential":{"digest":"` + digest + `","generation":-1}}`,
					`{"path":"notes.txt","credential":{"digest":"` + digest + `","generation":"0"}}`,
				} {
					e := ev
					e.Metadata.Details = json.RawMessage(d)
					out = append(out, e)
				}
				return out
			},
			wantOutcome: tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
		{
			name: "a path with ..",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				ev := recorded(t, tools.NameRead, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))
				return []events.ToolSettled{
					withDetail(t, ev, "path", "../"+filepath.Base(f.root)+"/notes.txt"),
					withDetail(t, ev, "path", "sub/../notes.txt"),
					withDetail(t, ev, "path", "../"+filepath.Base(f.outside)+"/notes.txt"),
				}
			},
			wantOutcome: tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
		{
			name: "an absolute path",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				ev := recorded(t, tools.NameRead, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))
				return []events.ToolSettled{
					withDetail(t, ev, "path", filepath.Join(f.root, "notes.txt")),
					withDetail(t, ev, "path", filepath.Join(f.outside, "notes.txt")),
				}
			},
			wantOutcome: tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
		{
			name: "a path through a symlink that points outside",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				ev := recorded(t, tools.NameRead, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))
				return []events.ToolSettled{withDetail(t, ev, "path", "out/notes.txt")}
			},
			patch:       "*** Update File: out/notes.txt\n@@\n-hello\n+HELLO\n",
			wantOutcome: tools.OutcomeError, wantCode: "symlink_refused", wantNotes: "hello\n",
		},
		{
			name: "a path through a symlink inside the root",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				ev := recorded(t, tools.NameRead, call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`))
				return []events.ToolSettled{withDetail(t, ev, "path", "alias.txt")}
			},
			wantOutcome: tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
		{
			name: "tampered apply_patch and write paths",
			turn1: func(t *testing.T, f fixture) []events.ToolSettled {
				call(t, f.a, tools.NameRead, `{"path":"notes.txt"}`)
				w := recorded(t, tools.NameWrite, call(t, f.a, tools.NameWrite, args("path", "notes.txt", "content", "hello\n!\n")))
				pr := call(t, f.a, tools.NameApplyPatch, args("patch", patchText("*** Update File: notes.txt\n@@\n-!\n+hello\n")))
				want(t, pr, tools.OutcomeCompleted, "")
				p := recorded(t, tools.NameApplyPatch, pr)
				cred := facts(t, pr)["credentials"].(map[string]any)["notes.txt"]
				put(t, f.root, "notes.txt", "hello\n")
				put(t, f.outside, "notes.txt", "hello\n")
				return []events.ToolSettled{
					withDetail(t, w, "path", "out/notes.txt"),
					withDetail(t, p, "credentials", map[string]any{
						"../" + filepath.Base(f.root) + "/notes.txt": cred, filepath.Join(f.root, "notes.txt"): cred,
						"out/notes.txt": cred, "alias.txt": cred, "./notes.txt": cred,
					}),
				}
			},
			wantOutcome: tools.OutcomeError, wantCode: "read_required", wantNotes: "hello\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, root := newSet(t)
			outside := t.TempDir()
			put(t, root, "notes.txt", "hello\n")
			put(t, root, "sub/x.txt", "x\n")
			put(t, outside, "notes.txt", "hello\n")
			if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("notes.txt", filepath.Join(root, "alias.txt")); err != nil {
				t.Fatal(err)
			}
			evs := tc.turn1(t, fixture{a: a, root: root, outside: outside})

			b := setAt(t, root)
			restoreInto(b, evs...)
			if tc.everyRestorer {
				for _, ev := range evs {
					for _, tl := range b.Tools() {
						if r, ok := tl.(tools.Restorer); ok {
							r.Restore(ev)
						}
					}
				}
			}
			p := tc.patch
			if p == "" {
				p = updateNotes
			}
			r := call(t, b, tools.NameApplyPatch, args("patch", patchText(p)))
			want(t, r, tc.wantOutcome, tc.wantCode)
			if got := get(t, root, "notes.txt"); got != tc.wantNotes {
				t.Errorf("notes.txt is %q, want %q", got, tc.wantNotes)
			}
			if got := get(t, outside, "notes.txt"); got != "hello\n" {
				t.Errorf("a file outside the workspace was written: %q", got)
			}
			if tc.wantCode == "read_required" || tc.wantCode == "invalid_arguments" || tc.wantCode == "symlink_refused" {
				for _, k := range []string{"notes.txt", "out/notes.txt", "alias.txt"} {
					if b.Credentials().Held(k) != nil {
						t.Errorf("a credential for %s was restored", k)
					}
				}
			}
		})
	}
}

// TestRestoreUncertainRevokes: an uncertain apply_patch or write drops the credentials of
// what it wrote or failed on, in the process that ran it and in a restored one, even for a
// file whose bytes are still what was read.
func TestRestoreUncertainRevokes(t *testing.T) {
	a, root := newSet(t)
	put(t, root, "a.txt", "a\n")
	put(t, root, "locked/b.txt", "b\n")
	evs := []events.ToolSettled{
		recorded(t, tools.NameRead, call(t, a, tools.NameRead, `{"path":"a.txt"}`)),
		recorded(t, tools.NameRead, call(t, a, tools.NameRead, `{"path":"locked/b.txt"}`)),
	}
	lockDir(t, filepath.Join(root, "locked"))
	r := call(t, a, tools.NameApplyPatch, args("patch", patchText(
		"*** Update File: a.txt\n@@\n-a\n+A\n",
		"*** Update File: locked/b.txt\n@@\n-b\n+B\n",
	)))
	want(t, r, tools.OutcomeUncertain, "uncertain")
	evs = append(evs, recorded(t, tools.NameApplyPatch, r))
	// An uncertain write revokes likewise.
	put(t, root, "c.txt", "c\n")
	evs = append(evs, recorded(t, tools.NameRead, call(t, a, tools.NameRead, `{"path":"c.txt"}`)))
	lockDir(t, root)
	r = call(t, a, tools.NameWrite, args("path", "c.txt", "content", "C\n"))
	want(t, r, tools.OutcomeUncertain, "uncertain")
	evs = append(evs, recorded(t, tools.NameWrite, r))

	b := setAt(t, root)
	restoreInto(b, evs...)
	if get(t, root, "locked/b.txt") != "b\n" {
		t.Fatal("the failed file changed")
	}
	// Checked before anything is written, so the lock does not decide the outcome.
	want(t, call(t, b, tools.NameApplyPatch, args("patch", patchText("*** Update File: locked/b.txt\n@@\n-b\n+B\n"))), tools.OutcomeError, "read_required")
	want(t, call(t, b, tools.NameApplyPatch, args("patch", patchText("*** Update File: a.txt\n@@\n-A\n+AA\n"))), tools.OutcomeError, "read_required")
	if get(t, root, "c.txt") != "c\n" {
		t.Fatal("the failed write changed c.txt")
	}
	want(t, call(t, b, tools.NameWrite, args("path", "c.txt", "content", "C\n")), tools.OutcomeError, "read_required")
}

// FuzzRestore feeds arbitrary details to the three Restorers under every outcome. Restore
// must not panic, and a credential may only be held for a clean path that names a place
// inside the workspace without a symbolic link on the way.
func FuzzRestore(f *testing.F) {
	root, outside := f.TempDir(), f.TempDir()
	for rel, content := range map[string]string{"notes.txt": "hello\n", "sub/x.txt": "x\n"} {
		put(f, root, rel, content)
	}
	put(f, outside, "notes.txt", "hello\n")
	for link, to := range map[string]string{"out": outside, "alias.txt": "notes.txt", "dangling": filepath.Join(outside, "none")} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	// One artifact directory for every iteration: restoring never writes one.
	artifacts := filepath.Join(f.TempDir(), "artifacts")
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}

	// Seeds: real details of each tool, then tampered ones.
	a := setAt(f, root)
	read := call(f, a, tools.NameRead, `{"path":"notes.txt"}`)
	write := call(f, a, tools.NameWrite, args("path", "sub/x.txt", "content", "y\n"))
	applied := call(f, a, tools.NameApplyPatch, args("patch", patchText("*** Update File: sub/x.txt\n@@\n-y\n+x\n")))
	refused := call(f, a, tools.NameApplyPatch, args("patch", patchText("*** Update File: notes.txt\n@@\n-absent\n+x\n")))
	for _, r := range []tools.Result{read, write, applied, refused} {
		f.Add([]byte(r.Metadata.Details))
	}
	digest := facts(f, read)["credential"].(map[string]any)["digest"].(string)
	cred := `{"digest":"` + digest + `","generation":0}`
	for _, p := range []string{"../notes.txt", "/notes.txt", filepath.Join(root, "notes.txt"), "out/notes.txt", "alias.txt",
		"dangling", "./notes.txt", "sub/../notes.txt", "notes.txt/", "", ".", "sub//x.txt", "no\\u0000pe", "NOTES.TXT"} {
		f.Add([]byte(`{"path":"` + p + `","credential":` + cred + `}`))
		f.Add([]byte(`{"credentials":{"` + p + `":` + cred + `},"deletedPaths":[],"attempts":[{"path":"` + p + `","op":"` + digest + `","content":"` + digest + `"}]}`))
		f.Add([]byte(`{"written":["` + p + `"],"failed":"` + p + `"}`))
	}

	outcomes := []tools.Outcome{tools.OutcomeCompleted, tools.OutcomeError, tools.OutcomeUncertain, tools.OutcomeBlocked, tools.OutcomeCancelled}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := New(Config{Root: root, ArtifactDir: artifacts, SessionID: testSession})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{tools.NameRead, tools.NameWrite, tools.NameApplyPatch} {
			for _, o := range outcomes {
				restoreInto(s, events.ToolSettled{Tool: name, Outcome: string(o), Metadata: events.ToolMetadata{Details: data}})
			}
		}
		probes := append(jsonStrings(data), "notes.txt", "sub/x.txt", "out/notes.txt", "alias.txt", "dangling", "../notes.txt")
		for _, p := range probes {
			c := s.Credentials().Held(p)
			if c == nil {
				continue
			}
			if c.Digest.IsZero() {
				t.Fatalf("credential for %q without a digest", p)
			}
			if reason := unclean(realRoot, p); reason != "" {
				t.Fatalf("credential held for %q: %s", p, reason)
			}
		}
	})
}

// jsonStrings is every string value and object key in data, when it is JSON: a superset of
// what a typed decoding of it can see.
func jsonStrings(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return out
		}
		if s, ok := tok.(string); ok {
			out = append(out, s)
		}
	}
}

// unclean says why p is not a clean workspace path under realRoot ("" if it is), checked
// independently of the files package: clean relative form, and no existing prefix is a
// symbolic link.
func unclean(realRoot, p string) string {
	if !fs.ValidPath(p) || p == "." || strings.ContainsRune(p, 0) {
		return "not a clean relative path"
	}
	cur := realRoot
	for _, part := range strings.Split(p, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "leads through the symbolic link " + cur
		}
	}
	return ""
}
