package console_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/commands/app"
)

var update = flag.Bool("update", false, "write docs/console.png from the browser test")

// chromium finds a Chromium binary (the Debian package chromium installs /usr/bin/chromium).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts one headless Chromium for a test.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium binary on PATH: install the Debian package chromium (apt-get install -y chromium) to run the console's browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.WindowSize(1400, 1100),
		chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 { // Chromium refuses to run as root inside its own sandbox
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	return bctx
}

// do runs browser steps, failing the test with what was being done.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// poll waits until a JavaScript expression is true in the page, for at most 10 s.
func poll(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(10*time.Second))(ctx, t)
		return chromedp.Void{}, err
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// The console in a real browser: the list, a click through to a session with a child, the
// child, a prompt receipt and its content, a verification receipt, the live timeline; then a
// screenshot for docs/console.png.
func TestConsoleInBrowser(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, options{})
	sc := populate(t, f, 2)

	do(t, ctx, "load the list", chromedp.Navigate(f.base+"/console"), chromedp.WaitVisible(chromedp.CSS("table#sessions")))
	if n := eval[int](t, ctx, `document.querySelectorAll("tr.session").length`); n != 4 {
		t.Fatalf("%d sessions listed, want 4", n)
	}
	do(t, ctx, "click through to the parent", chromedp.Click(chromedp.CSS(`a.session-link[href="/console/sessions/`+sc.parent+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("ol#timeline")))
	if title := eval[string](t, ctx, `document.getElementById("session-title").textContent`); title != "Audit parent" {
		t.Fatalf("title %q", title)
	}

	// Live: a new turn's events appear without a reload, once the stream is open.
	do(t, ctx, "open the live stream", poll(`document.getElementById("live-status").textContent.includes("following")`))
	spec := f.script("live", scripted.Script{Turns: []scripted.Turn{{Text: "live answer"}}})
	f.run(app.RunTurn{Meta: meta("live-1"), SessionID: sc.parent, Prompt: "a second question", Model: spec})
	do(t, ctx, "see the new turn live", poll(`[...document.querySelectorAll("li.live")].some(li => li.textContent.includes("a second question"))`))

	do(t, ctx, "the screenshot's page", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("ol#timeline")))
	if *update {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "console.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	do(t, ctx, "click through to the child", chromedp.Click(chromedp.CSS("a.child-link")), chromedp.WaitVisible(chromedp.CSS("a#parent")))
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/console/sessions/"+sc.child {
		t.Fatalf("at %s, want the child", loc)
	}
	do(t, ctx, "open the child's first prompt receipt", chromedp.Click(chromedp.CSS("a.receipt-link")), chromedp.WaitVisible(chromedp.CSS("#receipt-verified")))
	if n := eval[int](t, ctx, `document.querySelectorAll("span.redacted").length`); n == 0 {
		t.Fatal("the receipt's content is not redacted")
	}
	do(t, ctx, "show its content", chromedp.Click(chromedp.CSS("a#show-content")), chromedp.WaitVisible(chromedp.CSS("a#hide-content")))
	if !eval[bool](t, ctx, `document.body.textContent.includes("Lane A: read the notes")`) {
		t.Fatal("the child's task is not in its receipt's content")
	}
	do(t, ctx, "back to the parent", chromedp.Click(chromedp.CSS("a#nav-timeline")), chromedp.WaitVisible(chromedp.CSS("a#parent")),
		chromedp.Click(chromedp.CSS("a#parent")), chromedp.WaitVisible(chromedp.CSS("a.child-link")))
	do(t, ctx, "open the verification receipt", chromedp.Click(chromedp.CSS("a.verification-link")), chromedp.WaitVisible(chromedp.CSS("#verdict")))
	if v := eval[string](t, ctx, `document.getElementById("verdict").textContent`); v != "passed" {
		t.Fatalf("verdict %q", v)
	}
	do(t, ctx, "verify the session", chromedp.Click(chromedp.CSS("a#nav-verify")), chromedp.WaitVisible(chromedp.CSS("#verify-result")))
	if v := eval[string](t, ctx, `document.getElementById("verify-result").textContent`); !strings.HasPrefix(v, "Verified:") {
		t.Fatalf("verify: %q", v)
	}
}

// attacked is true when any payload ran or any hostile element reached the DOM: window.__xss
// set, the title changed, a script other than the console's, an image, SVG, frame or style
// element, or a javascript: link.
const attacked = `(() => {
  const found = [];
  if (window.__xss !== undefined) found.push("window.__xss=" + window.__xss);
  if (document.title.includes("pwned")) found.push("title " + document.title);
  const scripts = [...document.scripts].filter(s => !s.src.endsWith("/console/static/console.js"));
  if (scripts.length) found.push(scripts.length + " foreign script(s)");
  for (const sel of ["img", "svg", "iframe", "body style", "textarea", 'a[href^="javascript:" i]', "[onerror]", "[onload]"]) {
    if (document.querySelector(sel)) found.push(sel);
  }
  return found.join("; ");
})()`

// The XSS table: hostile session titles, prompts, tool output and arguments, file names,
// workspace paths (a receipt section's source) and AGENTS.md (a receipt section's content),
// on every page they reach and in the live timeline: none runs, none becomes an element, and
// each is shown as the text it is.
func TestConsoleXSSInBrowser(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, options{workspace: payload(3) + " " + payload(5)})
	sc := populate(t, f, 0)
	shown := map[int]bool{}
	visit := func(path string) {
		t.Helper()
		do(t, ctx, "load "+path, chromedp.Navigate(f.base+path), chromedp.WaitReady(chromedp.CSS("main")))
		if got := eval[string](t, ctx, attacked); got != "" {
			t.Errorf("%s: %s", path, got)
		}
		texts, _ := json.Marshal(hostileTexts())
		var in []int
		in = eval[[]int](t, ctx, fmt.Sprintf(`%s.map((s, i) => document.body.textContent.includes(s) ? i+1 : 0).filter(n => n)`, texts))
		for _, n := range in {
			shown[n] = true
		}
	}
	for _, p := range []string{"/console/", "/console/sessions/" + sc.parent, "/console/sessions/" + sc.child,
		"/console/sessions/" + sc.parent + "/prompt?step=1&show=content", "/console/sessions/" + sc.parent + "/prompt?step=3&show=content",
		"/console/sessions/" + sc.child + "/prompt?show=content", "/console/receipts/" + sc.receipt,
		"/console/sessions/" + sc.parent + "/work", "/console/sessions/" + sc.parent + "/verify"} {
		visit(p)
	}
	if title := eval[string](t, ctx, `document.title`); !strings.HasPrefix(title, "Verify ") {
		t.Errorf("title %q", title)
	}
	for _, x := range hostile {
		if !shown[x.n] {
			t.Errorf("payload %d (%q) is shown as text on no page", x.n, x.text)
		}
	}

	// The live timeline adds events as text: a hostile prompt arriving over the stream.
	visit("/console/sessions/" + sc.parent)
	do(t, ctx, "open the live stream", poll(`document.getElementById("live-status").textContent.includes("following")`))
	spec := f.script("live", scripted.Script{Turns: []scripted.Turn{{Text: payload(2)}}})
	f.run(app.RunTurn{Meta: meta("live-x"), SessionID: sc.parent, Prompt: payload(1) + payload(5), Model: spec})
	do(t, ctx, "see the hostile prompt live", poll(fmt.Sprintf(`[...document.querySelectorAll("li.live")].some(li => li.textContent.includes(%q))`,
		payload(1)+payload(5))))
	if got := eval[string](t, ctx, attacked); got != "" {
		t.Errorf("live timeline: %s", got)
	}
}

func hostileTexts() []string {
	out := make([]string, len(hostile))
	for i, x := range hostile {
		out[i] = x.text
	}
	return out
}

// With a token configured, a browser signs in through the form; the cookie it gets is hidden
// from scripts and carries the pages and the live stream.
func TestConsoleSignInInBrowser(t *testing.T) {
	const token = "fedcba9876543210fedcba9876543210"
	ctx := browser(t)
	f := newFixture(t, options{tokens: map[string]string{"auditor": token}})
	sc := populate(t, f, 0)
	do(t, ctx, "load the console", chromedp.Navigate(f.base+"/console/"), chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)))
	do(t, ctx, "a wrong token", chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), "not-the-token-at-all"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#login-message")))
	do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("table#sessions")))
	if c := eval[string](t, ctx, `document.cookie`); c != "" {
		t.Fatalf("a script reads the cookie: %q", c)
	}
	do(t, ctx, "open the parent", chromedp.Click(chromedp.CSS(`a.session-link[href="/console/sessions/`+sc.parent+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("ol#timeline")),
		poll(`document.getElementById("live-status").textContent.includes("following")`))
	spec := f.script("live", scripted.Script{Turns: []scripted.Turn{{Text: "signed-in answer"}}})
	f.run(app.RunTurn{Meta: meta("live-s"), SessionID: sc.parent, Prompt: "asked while signed in", Model: spec})
	do(t, ctx, "see the turn live", poll(`[...document.querySelectorAll("li.live")].some(li => li.textContent.includes("asked while signed in"))`))
	do(t, ctx, "sign out", chromedp.Click(chromedp.CSS("#sign-out")), chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)))
	do(t, ctx, "the pages ask again", chromedp.Navigate(f.base+"/console/sessions/"+sc.parent), chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)))
}
