package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zuno-run/zuno/events"
)

// askedBy says which gate asked and why (docs/permissions.md, "Asking"): the risk gate, strict
// mode, a rule that says ask, or no rule. An ask recorded before asks named their gate says
// what its rule said.
func askedBy(e events.PermissionAsked) string {
	switch e.Gate {
	case events.AskGateRisk:
		return "the risk gate asks: " + e.Reason
	case events.AskGateStrict:
		s := "strict mode asks afresh for every side-effecting call"
		if e.Rule != "" {
			s += fmt.Sprintf(" (rule %s, %s layer, allows it)", e.Rule, e.Layer)
		}
		return s
	case events.AskGateRule, "":
		if e.Rule != "" {
			return fmt.Sprintf("rule %s (%s layer) says ask", e.Rule, e.Layer)
		}
	}
	return "no rule decides it, so it asks"
}

// editAskLines is how many lines of a change an edit ask shows.
const editAskLines = 24

// noteEdits keeps the arguments of each call that edits a file, by call id, from the recorded
// response, so an ask about it can show the change (askView).
func (o *runObserver) noteEdits(r *events.ProviderResponse) {
	if r == nil {
		return
	}
	for _, c := range r.ToolCalls {
		if c.Name == "write" || c.Name == "apply_patch" {
			o.edits[c.ID] = c.Arguments
		}
	}
}

// askView is what an ask shows under its line: for an edit, the change it asks to make (a
// patch as written, a write as a diff against the file as it is now), at most editAskLines
// lines; nothing for other asks.
func (o *runObserver) askView(e events.PermissionAsked) []string {
	args, ok := o.edits[e.CallID]
	if !ok || e.Key != "edit" {
		return nil
	}
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
		Patch   string `json:"patch"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return nil
	}
	var lines []string
	if e.Tool == "apply_patch" {
		lines = strings.Split(strings.TrimRight(a.Patch, "\n"), "\n")
	} else {
		lines = writeDiff(o.workspacePath(a.Path), a.Content)
	}
	if len(lines) > editAskLines {
		lines = append(lines[:editAskLines-1:editAskLines-1], fmt.Sprintf("… (%d more lines)", len(lines)-editAskLines+1))
	}
	return lines
}

// askWorkspace is where a run's file tools resolve relative paths, for the diff of a write's
// ask: --dir, else the continued session's recorded workspace, else the working directory (a
// new session's). A session whose place cannot be read leaves the working directory: the
// diff then says when the file is not found there.
func askWorkspace(ctx context.Context, a *app, session, dir, cwd string) string {
	if dir != "" {
		return dir
	}
	if session != "" {
		if p, err := a.Queries.Place(ctx, session); err == nil && p.Directory != "" {
			return p.Directory
		}
	}
	return cwd
}

// workspacePath places a tool's path in the run's workspace.
func (o *runObserver) workspacePath(p string) string {
	if filepath.IsAbs(p) || o.dir == "" {
		return p
	}
	return filepath.Join(o.dir, p)
}

// writeDiff is a write's change as diff lines: the current file's lines against the new
// content's, changed runs with one line of context; every line added when the file cannot be
// read (it is new, or not where this process looks).
func writeDiff(path, content string) []string {
	b, err := os.ReadFile(path)
	newLines := splitLines(content)
	if err != nil {
		head := fmt.Sprintf("new file %s (+%d lines)", path, len(newLines))
		if !os.IsNotExist(err) {
			head = fmt.Sprintf("%s: %v; the new content (+%d lines)", path, err, len(newLines))
		}
		return append([]string{head}, prefixed("+", newLines)...)
	}
	oldLines := splitLines(string(b))
	if len(oldLines)*len(newLines) > 4_000_000 { // too big to align: say it whole
		return append([]string{fmt.Sprintf("%s: -%d +%d lines", path, len(oldLines), len(newLines))},
			append(prefixed("-", oldLines), prefixed("+", newLines)...)...)
	}
	return append([]string{"--- " + path}, lineDiff(oldLines, newLines)...)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}

// lineDiff aligns a and b by their longest common subsequence and returns the changed lines
// with one line of unchanged context around each run, "…" between runs.
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]): // what goes, before what comes
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	var out []string
	last := -2
	for k, o := range ops {
		near := o.kind != ' ' || (k > 0 && ops[k-1].kind != ' ') || (k+1 < len(ops) && ops[k+1].kind != ' ')
		if !near {
			continue
		}
		if last >= 0 && k > last+1 {
			out = append(out, "…")
		}
		out = append(out, string(o.kind)+o.text)
		last = k
	}
	if len(out) == 0 {
		return []string{"(no change)"}
	}
	return out
}

// replies are the answers an ask takes: always only when it offers one (strict mode and the
// risk gate never do).
func replies(e events.PermissionAsked) string {
	if e.Always == "" {
		return "once|reject"
	}
	return "once|always|reject"
}
