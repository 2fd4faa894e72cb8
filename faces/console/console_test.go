package console_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/faces/console"
)

// Every page of a populated log: what it shows, its headers, the list's filters and pages,
// the receipt's redaction (debug prompt's), the verify page before and after the log is
// altered, and the typed error pages.
func TestConsolePages(t *testing.T) {
	f := newFixture(t, options{})
	sc := populate(t, f, 3)

	t.Run("every page is HTML with the console's headers", func(t *testing.T) {
		for _, p := range []string{"/console/", "/console/sessions/" + sc.parent, "/console/sessions/" + sc.parent + "/prompt",
			"/console/sessions/" + sc.parent + "/work", "/console/sessions/" + sc.parent + "/verify", "/console/receipts/" + sc.receipt,
			"/console/sessions/ses_nope"} {
			_, h, _ := f.get(p)
			if h.Get("Content-Security-Policy") != console.ContentSecurityPolicy || h.Get("X-Content-Type-Options") != "nosniff" ||
				h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s: headers %v", p, h)
			}
		}
		if !strings.Contains(console.ContentSecurityPolicy, "script-src 'self'") || strings.Contains(console.ContentSecurityPolicy, "unsafe") {
			t.Fatalf("CSP %q", console.ContentSecurityPolicy)
		}
	})

	t.Run("the list: status, agent, title, pages", func(t *testing.T) { checkList(t, f, sc) })

	t.Run("the timeline: turns, steps, calls with decisions, receipts, children", func(t *testing.T) {
		status, _, body := f.get("/console/sessions/" + sc.parent)
		for _, want := range []string{"Turn started", "Turn finished", "Step 1", `href="/console/sessions/` + sc.parent + `/prompt?step=1"`, `<code class="tool">plan_update</code>`,
			`<code>call_push</code> <span class="status status-blocked">blocked</span>`,
			"Permission: <strong>deny</strong> (rule said deny) key <code>shell</code> on <code>git push origin main</code>; rule <code>shell: git push*</code>, layer global; source rule;",
			`<code class="tool">shell</code>`, `<code class="tool">write</code> <code>call_w</code> <span class="status status-completed">`, `<code class="tool">task</code>`,
			"Permission: <strong>allow</strong>", "; source rule;", "Sandbox: full_access", `href="/console/receipts/` + sc.receipt + `"`,
			`class="child-link" href="/console/sessions/` + sc.child + `"`, "Lane A: read the notes",
			`data-session="` + sc.parent + `"`} {
			if status != 200 || !contains(body, want) {
				t.Errorf("timeline lacks %q", want)
			}
		}
		if t.Failed() {
			t.Log(body)
		}
		_, _, child := f.get("/console/sessions/" + sc.child)
		if !contains(child, `id="parent" href="/console/sessions/`+sc.parent+`"`) || !contains(child, `<code class="tool">read</code>`) {
			t.Errorf("child timeline: %s", child)
		}
	})

	t.Run("a prompt receipt: redacted unless show=content, as debug prompt", func(t *testing.T) {
		for _, show := range []bool{false, true} {
			path := "/console/sessions/" + sc.parent + "/prompt?step=1"
			if show {
				path += "&show=content"
			}
			status, _, body := f.get(path)
			view, err := f.app.Queries.Prompt(context.Background(), sc.parent, 1, show)
			if err != nil || status != 200 || !contains(body, `id="receipt-verified"`) {
				t.Fatalf("%s: %d %v", path, status, err)
			}
			for _, s := range view.Sections {
				for _, want := range []string{s.SHA256, html.EscapeString(s.Source), html.EscapeString(s.Trust), html.EscapeString(s.Content)} {
					if !contains(body, want) {
						t.Errorf("show=%v: section %s: page lacks %q", show, s.ID, want)
					}
				}
			}
			if got := contains(body, "Project rules: be careful."); got != show {
				t.Errorf("show=%v: AGENTS.md's content on the page: %v", show, got)
			}
			if !show && !contains(body, "&lt;redacted&gt;") {
				t.Error("no redaction marker")
			}
		}
		if status, _, _ := f.get("/console/sessions/" + sc.parent + "/prompt?step=99"); status != 404 {
			t.Errorf("step 99: %d", status)
		}
	})

	t.Run("the verification receipt", func(t *testing.T) {
		status, _, body := f.get("/console/receipts/" + sc.receipt)
		if status != 200 || !contains(body, `id="verdict">passed`) || !contains(body, "printf") {
			t.Fatalf("%d %s", status, body)
		}
	})

	t.Run("plan, todos and goal", func(t *testing.T) {
		for _, sid := range []string{sc.parent, sc.child} { // a child's are its root's
			status, _, body := f.get("/console/sessions/" + sid + "/work")
			if status != 200 || !contains(body, `<dd id="plan-title">Audit the notes</dd>`) || !contains(body, "delegate the reading") ||
				!contains(body, `<td class="todo-title">read the notes</td>`) || !contains(body, `<p id="goal">No Goal.</p>`) {
				t.Fatalf("%s: %d %s", sid, status, body)
			}
		}
	})

	t.Run("errors are typed pages", func(t *testing.T) {
		for _, tc := range []struct {
			path   string
			status int
			code   string
		}{
			{"/console/sessions/ses_nope", 404, "session_not_found"},
			{"/console/sessions/a.b", 400, "bad_id"},
			{"/console/receipts/rcp_nope", 400, "invalid_argument"},
			{"/console/nothing/here", 404, "route_not_found"},
			{"/console/sessions/" + sc.parent + "/prompt?step=x", 400, "bad_request"},
		} {
			status, _, body := f.get(tc.path)
			if status != tc.status || !contains(body, `<code id="error-code">`+tc.code+`</code>`) {
				t.Errorf("%s: %d %s", tc.path, status, body)
			}
		}
	})

	// Last: it alters the log.
	t.Run("verify names the first bad event", func(t *testing.T) {
		status, _, body := f.get("/console/sessions/" + sc.child + "/verify")
		if status != 200 || !contains(body, "Verified:") || contains(body, "first-bad") {
			t.Fatalf("%d %s", status, body)
		}
		recs, err := f.app.Queries.Events(context.Background(), commands.SessionStream(sc.child), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var pos uint64
		for _, r := range recs {
			if r.Type == events.TypeUserMessageAppended {
				pos = r.Position
			}
		}
		f.tamper(`UPDATE event_log SET data = replace(data, 'Lane A', 'Lane B') WHERE position = ?`, pos)
		status, _, body = f.get("/console/sessions/" + sc.child + "/verify")
		if status != 200 || !contains(body, "Does not verify") || !contains(body, `<dd id="first-bad-position">`+strconv.FormatUint(pos, 10)+`</dd>`) {
			t.Fatalf("after tampering with position %d: %d %s", pos, status, body)
		}
	})
}

// With tokens, a browser signs in once: the token is checked and kept in an HttpOnly,
// SameSite=Strict cookie that authenticates reads (the pages and the event stream) and never
// a write.
func TestConsoleSignIn(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	f := newFixture(t, options{tokens: map[string]string{"auditor": token}})
	sc := populate(t, f, 0)
	f.token = ""
	if status, h, body := f.get("/console/"); status != 401 || !contains(body, `action="/console/login"`) ||
		h.Get("Content-Security-Policy") != console.ContentSecurityPolicy {
		t.Fatalf("without a token: %d %s", status, body)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(tok string, headers ...string) *http.Response {
		req, _ := http.NewRequest("POST", f.base+"/console/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := login("wrong-token-wrong-token"); res.StatusCode != 401 || len(res.Cookies()) != 0 {
		t.Fatalf("a wrong token: %d %v", res.StatusCode, res.Cookies())
	}
	if res := login(token, "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"); res.StatusCode != 403 || len(res.Cookies()) != 0 {
		t.Fatalf("a cross-site sign-in: %d", res.StatusCode)
	}
	res := login(token)
	cookies := res.Cookies()
	if res.StatusCode != 303 || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in: %d %v", res.StatusCode, cookies)
	}
	cookie := cookies[0].Name + "=" + cookies[0].Value
	if status, _, body := f.get("/console/sessions/"+sc.parent, "Cookie", cookie); status != 200 || !contains(body, "Turn started") ||
		!contains(body, `id="sign-out"`) {
		t.Fatalf("with the cookie: %d", status)
	}
	// The event stream the timeline follows takes the cookie too.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.base+"/api/sessions/"+sc.parent+"/events", nil)
	req.Header.Set("Cookie", cookie)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 || stream.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream with the cookie: %v %v", stream, err)
	}
	stream.Body.Close()
	// A write with the cookie alone is refused: writes need the header.
	wreq, _ := http.NewRequest("POST", f.base+"/api/verify", nil)
	wreq.Header.Set("Cookie", cookie)
	wres, err := http.DefaultClient.Do(wreq)
	if err != nil || wres.StatusCode != 401 {
		t.Fatalf("a write with the cookie: %v %v", wres, err)
	}
	wres.Body.Close()
	if status, _, _ := f.get("/console/", "Cookie", "zuno_console=not-the-token-at-all"); status != 401 {
		t.Fatalf("a forged cookie: %d", status)
	}
	logout := func(headers ...string) *http.Response {
		req, _ := http.NewRequest("POST", f.base+"/console/logout", nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := logout("Cookie", cookie, "Sec-Fetch-Site", "cross-site"); res.StatusCode != 403 || len(res.Cookies()) != 0 {
		t.Fatalf("a cross-site sign-out: %d", res.StatusCode)
	}
	if res := logout("Cookie", cookie); res.StatusCode != 303 || len(res.Cookies()) != 1 || res.Cookies()[0].MaxAge >= 0 {
		t.Fatalf("sign-out: %d %v", res.StatusCode, res.Cookies())
	}
}

// Every hostile text is escaped on every page it reaches, before any browser sees it: the
// raw markup never appears in a body.
func TestConsoleEscapes(t *testing.T) {
	f := newFixture(t, options{workspace: payload(3) + " " + payload(5)})
	sc := populate(t, f, 0)
	pages := []string{"/console/", "/console/sessions/" + sc.parent, "/console/sessions/" + sc.child,
		"/console/sessions/" + sc.parent + "/prompt?step=1&show=content", "/console/sessions/" + sc.parent + "/prompt?step=3&show=content",
		"/console/receipts/" + sc.receipt, "/console/sessions/" + sc.parent + "/work", "/console/sessions/" + sc.parent + "/verify"}
	seen := map[int]bool{}
	for _, p := range pages {
		status, _, body := f.get(p)
		if status != 200 {
			t.Fatalf("%s: %d", p, status)
		}
		for _, x := range hostile {
			for _, raw := range []string{"<script>window.__xss", "<img src=x", "<svg onload", "<iframe", `href="javascript:`, "<style>body"} {
				if contains(x.text, raw) && contains(body, raw) {
					t.Errorf("%s: raw %q in the page", p, raw)
				}
			}
			if contains(body, html.EscapeString(x.text)) || contains(body, strings.ReplaceAll(html.EscapeString(x.text), "&#34;", "&#34;")) {
				seen[x.n] = true
			}
		}
	}
	for _, x := range hostile {
		if !seen[x.n] {
			t.Errorf("payload %d (%q) is on no page: the table does not test it", x.n, x.text)
		}
	}
}

// checkList checks the session list's filters and pages over the sessions populate recorded
// with 3 plain ones.
func checkList(t *testing.T, f *fixture, sc scenario) {
	status, _, body := f.get("/console/")
	if status != 200 || !contains(body, sc.parent) || !contains(body, sc.child) || !contains(body, "plain session 02") ||
		contains(body, "sign-out") { // no token, nothing to sign out of
		t.Fatalf("%d %s", status, body)
	}
	ids := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`class="session-link" href="/console/sessions/([^"]+)"`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"agent=orchestrator", []string{sc.parent}},
		{"agent=explorer", []string{sc.child}},
		{"q=PLAIN+session+01", []string{sc.plain[1]}},
		{"q=%25", nil}, // a LIKE wildcard is taken literally
		{"q=plain&per=2", []string{sc.plain[2], sc.plain[1]}},
		{"q=plain&per=2&page=2", []string{sc.plain[0]}},
		{"status=completed&q=plain&per=10", []string{sc.plain[2], sc.plain[1], sc.plain[0]}},
		{"status=archived", nil},
	} {
		status, _, body := f.get("/console/?" + tc.query)
		if got := ids(body); status != 200 || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: %d %v, want %v", tc.query, status, got, tc.want)
		}
	}
	_, _, first := f.get("/console/?q=plain&per=2")
	if !contains(first, `id="next" href="/console/?page=2&amp;per=2&amp;q=plain"`) || contains(first, `id="prev"`) {
		t.Errorf("first page's links: %s", first)
	}
	for _, bad := range []string{"page=0", "page=x", "per=0", "per=501"} {
		if status, _, body := f.get("/console/?" + bad); status != 400 || !contains(body, "bad_request") {
			t.Errorf("%s: %d", bad, status)
		}
	}
}

// The list's filters are SQL over the read models: the same on Postgres.
func TestConsoleListPostgres(t *testing.T) {
	f := newFixture(t, options{postgres: true})
	checkList(t, f, populate(t, f, 3))
}

// The console serves its stylesheet and script with their types, and nothing else of what
// it embeds: no template, no directory listing.
func TestConsoleStatic(t *testing.T) {
	f := newFixture(t, options{})
	for _, tc := range []struct {
		path   string
		status int
		typ    string
	}{
		{"/console/static/console.js", 200, "text/javascript; charset=utf-8"},
		{"/console/static/console.css", 200, "text/css; charset=utf-8"},
		{"/console/static/", 404, "text/html; charset=utf-8"},
		{"/console/static/layout.html", 404, "text/html; charset=utf-8"},
		{"/console/static/..%2ftemplates%2flayout.html", 404, "text/html; charset=utf-8"},
	} {
		status, h, _ := f.get(tc.path)
		if status != tc.status || h.Get("Content-Type") != tc.typ || h.Get("Content-Security-Policy") != console.ContentSecurityPolicy {
			t.Errorf("%s: %d %q", tc.path, status, h.Get("Content-Type"))
		}
	}
}
