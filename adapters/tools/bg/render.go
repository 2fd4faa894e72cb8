package bg

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zuno-run/zuno/events"
)

// renderWindow is a one-line header of the window's facts, then its bytes
// exactly as read.
func renderWindow(action string, w Window, interrupted bool) string {
	var b strings.Builder
	b.WriteString("[bg ")
	b.WriteString(action)
	b.WriteByte(' ')
	if w.TaskID != "" {
		b.WriteString(w.TaskID)
	} else {
		b.WriteString(strconv.Quote(w.OutputPath))
	}
	if w.Status != "" {
		fmt.Fprintf(&b, " status=%s", w.Status)
		if w.ExitCode != nil {
			fmt.Fprintf(&b, " exitCode=%d", *w.ExitCode)
		}
		if w.Signal != "" {
			fmt.Fprintf(&b, " signal=%s", w.Signal)
		}
		b.WriteString(receipt(w.Completion, w.CompletionError))
	}
	fmt.Fprintf(&b, " windowFrom=%d cursor=%d bytes=%d hasMore=%t hasEarlier=%t totalWritten=%d fromDisk=%t",
		w.WindowFrom, w.Cursor, w.Bytes, w.HasMore, w.HasEarlier, w.TotalWritten, w.FromDisk)
	if interrupted {
		b.WriteString(" waitInterrupted=true")
	}
	b.WriteString("]\n")
	if w.Bytes == 0 {
		b.WriteString("(no bytes in this window)")
	} else {
		b.WriteString(w.Text)
	}
	return b.String()
}

func renderList(list []TaskInfo) string {
	if len(list) == 0 {
		return "no background tasks"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d background task(s), oldest first:", len(list))
	for _, t := range list {
		b.WriteString("\n")
		b.WriteString(taskLine(t))
	}
	return b.String()
}

func renderCancel(t TaskInfo) string {
	return "[bg cancel] " + taskLine(t) + "\nread its output with action output"
}

func taskLine(t TaskInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s status=%s", t.ID, t.Status)
	if t.ExitCode != nil {
		fmt.Fprintf(&b, " exitCode=%d", *t.ExitCode)
	}
	if t.Signal != "" {
		fmt.Fprintf(&b, " signal=%s", t.Signal)
	}
	b.WriteString(receipt(t.Completion, t.CompletionError))
	switch {
	case t.Status == StatusLost:
		b.WriteString(" (the Zuno process that ran it ended without recording how it ended: the task died with it, at an unobserved moment; inspect what it should have done before rerunning)")
	case t.Status == StatusUnknown:
		fmt.Fprintf(&b, " heldBy=%s (another Zuno process runs it; its completion is read here once recorded there)", t.HeldBy)
	case t.GuardFailed:
		b.WriteString(" guardFailed=true (exit 125 is the guard's: whether the command ran is unknown; inspect before rerunning)")
	case t.NeverStarted:
		b.WriteString(" neverStarted=true (the program could not be started; nothing ran)")
	}
	fmt.Fprintf(&b, " totalWritten=%d started=%s", t.TotalWritten, t.Started.UTC().Format(time.RFC3339))
	if t.Ended != nil {
		fmt.Fprintf(&b, " ended=%s", t.Ended.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, " dir=%s command=%s", strconv.Quote(t.Dir), strconv.Quote(clip(t.Command, 200)))
	return b.String()
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// receipt says whether a task's completion is recorded in the session's log: the one
// receipt bg output, bg wait and a later turn's bg list share (docs/tools.md).
func receipt(c *events.BackgroundCompleted, recordErr string) string {
	switch {
	case c != nil:
		return " completion=recorded"
	case recordErr != "":
		return " completion=unrecorded (" + clip(recordErr, 200) + ")"
	}
	return ""
}
