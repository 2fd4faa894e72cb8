package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/zuno-run/zuno/events"
)

// A typed line is a prompt or a slash command; every spelling (docs/tui.md, "Slash commands").
func TestParseLine(t *testing.T) {
	cases := []struct {
		line, prompt, name, arg, code string
	}{
		{line: "fix the test", prompt: "fix the test"},
		{line: "  fix it  ", prompt: "  fix it  "}, // a prompt is sent as typed
		{line: "say /goal complete", prompt: "say /goal complete"},
		{line: "/goal", name: "goal"},
		{line: "  /goal   complete  ", name: "goal", arg: "complete"},
		{line: "/goal\tresume", name: "goal", arg: "resume"},
		{line: "/GOAL Complete", name: "goal", arg: "Complete"},
		{line: "/goal answer use   Postgres", name: "goal", arg: "answer use Postgres"},
		{line: "/resume", name: "resume"},
		{line: "/resume ses_0193", name: "resume", arg: "ses_0193"},
		{line: "/agent plan", name: "agent", arg: "plan"},
		{line: "/model scripted:s.json", name: "model", arg: "scripted:s.json"},
		{line: "/exit", name: "quit"},
		{line: "/quit", name: "quit"},
		{line: "/new", name: "new"},
		{line: "/queue fix  b\t", name: "queue", arg: "fix  b"},
		{line: "/queue", name: "queue"},
		{line: "/help", name: "help"},
		{line: "//etc/hosts is wrong", prompt: "/etc/hosts is wrong"},
		{line: "  //x", prompt: "/x"},
		{line: "/", code: CodeUnknownCommand},
		{line: "/ goal", code: CodeUnknownCommand + ""},
		{line: "/frobnicate now", code: CodeUnknownCommand},
		{line: "/goals", code: CodeUnknownCommand},
		{line: "/etc/hosts", code: CodeUnknownCommand},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			prompt, s, err := ParseLine(c.line)
			if c.code != "" {
				if ce, ok := err.(*chatError); !ok || ce.Code() != c.code || s != nil || prompt != "" {
					t.Fatalf("ParseLine(%q) = %q %+v %v; want %s", c.line, prompt, s, err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "" {
				if s != nil || prompt != c.prompt {
					t.Fatalf("ParseLine(%q) = %q %+v; want the prompt %q", c.line, prompt, s, c.prompt)
				}
				return
			}
			if s == nil || s.Name != c.name || s.Arg != c.arg || prompt != "" {
				t.Fatalf("ParseLine(%q) = %q %+v; want /%s %q", c.line, prompt, s, c.name, c.arg)
			}
		})
	}
}

// Whatever is typed: a command names a known slash command, and a line that starts with one
// "/" never reaches the model.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"hi", "/goal complete", "//x", "/", "/resume ses_1", "/\x00", " /agent\tplan "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		prompt, s, err := ParseLine(line)
		trimmed := strings.TrimSpace(line)
		switch {
		case s != nil && !slashNames[s.Name]:
			t.Fatalf("%q: command %q", line, s.Name)
		case s == nil && err == nil && strings.HasPrefix(trimmed, "/") && !strings.HasPrefix(trimmed, "//"):
			t.Fatalf("%q reaches the model as %q", line, prompt)
		case err != nil && (s != nil || prompt != ""):
			t.Fatalf("%q: refused and yet %q %+v", line, prompt, s)
		}
	})
}

// What reaches the terminal: the row of attacks a model's text (or a tool's output, a title)
// may carry, and what must survive.
func TestSanitize(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "hello, world\n", "hello, world\n"},
		{"CSI recolour", "a\x1b[31mred\x1b[0m", "a[31mred[0m"},
		{"cursor home and clear", "\x1b[H\x1b[2Jgone", "[H[2Jgone"},
		{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07", "]52;c;cm0gLXJmIH4="},
		{"OSC title with ST", "\x1b]0;pwned\x1b\\", "]0;pwned\\"},
		{"C1 CSI", "x\u009b2Jy", "x2Jy"},
		{"C1 OSC", "x\u009d0;t\u009cy", "x0;ty"},
		{"carriage return overwrite", "rm -rf /\rls", "rm -rf /ls"},
		{"backspaces", "safe\b\b\b\bevil", "safeevil"},
		{"DEL and NUL and BEL", "a\x7fb\x00c\x07", "abc"},
		{"tab", "a\tb", "a    b"},
		{"bidi override", "file\u202Etxt.exe", "filetxt.exe"},
		{"bidi isolate", "a\u2066b\u2069c", "abc"},
		{"invalid UTF-8", "a\xffb\xc0", "ab"},
		{"CJK and emoji survive", "数据库 👩‍💻 é", "数据库 👩‍💻 é"},
		{"newlines survive", "one\ntwo\n", "one\ntwo\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sanitize(c.in); got != c.want {
				t.Fatalf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\u009b", "x\ry", "\xff", "\t", "👩‍💻"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Sanitize(in)
		if !utf8.ValidString(out) {
			t.Fatalf("Sanitize(%q) = %q: not UTF-8", in, out)
		}
		for _, r := range out {
			if dropped(r) {
				t.Fatalf("Sanitize(%q) = %q keeps %U", in, out, r)
			}
		}
		if Sanitize(out) != out {
			t.Fatalf("Sanitize is not idempotent on %q", in)
		}
	})
}

// Ctrl-C (docs/tui.md, "Keys"): interrupt while a turn runs; while idle, the first arms and the
// second leaves; two within 2 s leave whatever runs; a key typed in between disarms.
func TestCtrlC(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	type press struct {
		at      time.Duration
		running bool
		typed   bool // a key typed before this press
		want    ctrlCAction
	}
	cases := map[string][]press{
		"running: interrupt":                {{0, true, false, interruptTurn}},
		"running, twice quickly: leave":     {{0, true, false, interruptTurn}, {time.Second, true, false, leave}},
		"running, twice slowly: interrupt":  {{0, true, false, interruptTurn}, {3 * time.Second, true, false, interruptTurn}},
		"idle: arm, then leave":             {{0, false, false, arm}, {10 * time.Second, false, false, leave}},
		"idle, twice quickly: leave":        {{0, false, false, arm}, {time.Second, false, false, leave}},
		"interrupt, then idle later: arm":   {{0, true, false, interruptTurn}, {5 * time.Second, false, false, arm}},
		"interrupt, then idle quickly":      {{0, true, false, interruptTurn}, {time.Second, false, false, leave}},
		"typing disarms":                    {{0, false, false, arm}, {time.Second, false, true, arm}, {2 * time.Second, false, false, leave}},
		"typing disarms a quick second one": {{0, true, false, interruptTurn}, {time.Second, true, true, interruptTurn}},
	}
	for name, presses := range cases {
		t.Run(name, func(t *testing.T) {
			var c ctrlC
			for i, p := range presses {
				if p.typed {
					c.typed()
				}
				if got := c.press(p.running, t0.Add(p.at)); got != p.want {
					t.Fatalf("press %d: %v, want %v", i, got, p.want)
				}
			}
		})
	}
}

// An item's answer: a number or a label selects an option, other text is free text where the
// item takes it.
func TestQuestionOption(t *testing.T) {
	opts := []events.QuestionOption{{Label: "SQLite"}, {Label: "Postgres"}}
	closed := events.QuestionItem{ID: "db", Options: opts}
	open := events.QuestionItem{ID: "db", Options: opts, Custom: true}
	free := events.QuestionItem{ID: "why"}
	cases := []struct {
		it       events.QuestionItem
		line     string
		selected string
		text     string
		ok       bool
	}{
		{closed, "2", "Postgres", "", true},
		{closed, " 1 ", "SQLite", "", true},
		{closed, "postgres", "Postgres", "", true},
		{closed, "3", "", "", false},
		{closed, "0", "", "", false},
		{closed, "-1", "", "", false},
		{closed, "01", "", "", false},
		{closed, "2x", "", "", false},
		{closed, "MySQL", "", "", false},
		{closed, "", "", "", false},
		{open, "MySQL", "", "MySQL", true},
		{open, "2", "Postgres", "", true},
		{open, "3", "", "3", true},
		{free, "because", "", "because", true},
		{free, "1", "", "1", true},
	}
	for _, c := range cases {
		a, ok := QuestionOption(c.it, c.line)
		if ok != c.ok || (ok && (a.ItemID != c.it.ID || a.Text != c.text || strings.Join(a.Selected, "") != c.selected)) {
			t.Errorf("%+v %q: %+v %v; want selected %q text %q ok %v", c.it.Options, c.line, a, ok, c.selected, c.text, c.ok)
		}
	}
}

// The full screen's layout at any size: exactly the terminal's rows, none wider than it, the
// header first and the input last, whatever the transcript and the panel hold.
func TestScreenFitsTheTerminal(t *testing.T) {
	ask := askMsg{Ask: events.PermissionAsked{Tool: "apply_patch", Key: "edit", Resource: strings.Repeat("dir/", 40) + "a.txt",
		Always: "a.txt", Mode: "standard"}, Why: "rule edit: * (global layer) says ask"}
	for i := range 40 {
		ask.View = append(ask.View, fmt.Sprintf("+line %d %s", i, strings.Repeat("x", i*3)))
	}
	for _, size := range [][2]int{{80, 24}, {40, 10}, {20, 6}, {120, 50}, {200, 8}} {
		for _, withAsk := range []bool{false, true} {
			at := time.Now()
			m := &screen{e: NewEngine(Config{Session: "ses_1"}, func(any) {}), now: func() time.Time { return at }}
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			for i := range 30 {
				m.Update(transcriptMsg(fmt.Sprintf("line %d: %s\n", i, strings.Repeat("word ", i))))
			}
			m.Update(transcriptMsg("\x1b[2Jstreaming… 数据库"))
			if withAsk {
				m.Update(ask)
				at = at.Add(readGuard) // the ask has been read: the prompt offers it
			}
			rows := strings.Split(m.View().Content, "\n")
			if len(rows) != size[1] {
				t.Fatalf("%v ask %v: %d rows", size, withAsk, len(rows))
			}
			for i, r := range rows {
				if w := ansi.StringWidth(r); w > max(20, size[0]) {
					t.Fatalf("%v ask %v: row %d is %d wide: %q", size, withAsk, i, w, r)
				}
				if strings.Contains(ansi.Strip(r), "\x1b") {
					t.Fatalf("row %d carries an escape the transcript brought: %q", i, r)
				}
			}
			last := ansi.Strip(rows[len(rows)-1])
			if want := map[bool]string{false: "> ", true: "o/a/r> "}[withAsk]; !strings.HasPrefix(last, want) {
				t.Fatalf("%v: the input row is %q", size, last)
			}
			if withAsk && !strings.Contains(ansi.Strip(rows[len(rows)-3]), "[r]eject?") {
				t.Fatalf("%v: the choices are not above the hint: %q", size, rows)
			}
			if !strings.Contains(ansi.Strip(rows[0]), "ses_1") && size[0] >= 80 {
				t.Fatalf("%v: header %q", size, rows[0])
			}
			if !withAsk && !strings.Contains(ansi.Strip(strings.Join(rows, "\n")), "streaming…") {
				t.Fatalf("%v: the open line is not shown", size)
			}
		}
	}
}

// PgUp shows older lines, PgDn comes back; the hint says how far back the view is.
func TestScreenScrolls(t *testing.T) {
	m := &screen{e: NewEngine(Config{}, func(any) {})}
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
	for i := range 100 {
		m.Update(transcriptMsg(fmt.Sprintf("line %03d\n", i)))
	}
	text := func() string { return ansi.Strip(m.View().Content) }
	if !strings.Contains(text(), "line 099") || strings.Contains(text(), "line 090") {
		t.Fatalf("the bottom:\n%s", text())
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	if s := text(); strings.Contains(s, "line 099") || !strings.Contains(s, "line 092") || !strings.Contains(s, "scrolled back 6 lines") {
		t.Fatalf("one page back:\n%s", s)
	}
	for range 30 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	if s := text(); !strings.Contains(s, "line 000") {
		t.Fatalf("the top:\n%s", s)
	}
	for range 30 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	if s := text(); !strings.Contains(s, "line 099") || strings.Contains(s, "scrolled back") {
		t.Fatalf("back at the bottom:\n%s", s)
	}
}

// A frame's cost against the transcript's length: the body wraps only what it shows, so a
// session of 10,000 lines draws as fast as one of 100 (the baseline, in the same run).
func BenchmarkView(b *testing.B) {
	for _, n := range []int{100, keptLines} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			m := &screen{e: NewEngine(Config{Session: "ses_1"}, func(any) {})}
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			for i := range n {
				m.Update(transcriptMsg(fmt.Sprintf("line %d: %s\n", i, strings.Repeat("lorem ipsum ", i%30))))
			}
			b.ResetTimer()
			for b.Loop() {
				m.Update(transcriptMsg("x")) // a streamed delta, then its frame
				_ = m.View()
			}
		})
	}
}
