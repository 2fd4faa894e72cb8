// Package console is the audit console of `zuno serve` (docs/console.md): server-rendered
// HTML pages over the same commands and queries the API and the CLI use, for the people who
// audit a run rather than drive it. Every page is a GET that reads (the verify page runs the
// chain check, which writes nothing); every value is escaped by html/template; the one script
// is a file of this package, served from the same origin, that follows the API's event stream
// so a session's timeline grows without a reload. Authentication is the server's
// (faces/httpapi mounts this handler behind it).
package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"strings"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain"
)

//go:embed templates/*.html static/*
var files embed.FS

// Prefix is where the console is mounted.
const Prefix = "/console/"

// ContentSecurityPolicy lets a page load only this origin's script, style and images, and
// nothing inline: a value that slipped past escaping still could not run (docs/console.md).
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Console is the console's pages over one Application.
type Console struct {
	app     *app.Application
	signOut bool
	pages   map[string]*template.Template
	mux     *http.ServeMux
}

// New returns the console of a; signOut shows the sign-out button (the server takes tokens).
func New(a *app.Application, signOut bool) *Console {
	c := &Console{app: a, signOut: signOut, pages: parsePages(), mux: http.NewServeMux()}
	c.mux.HandleFunc("GET "+Prefix+"static/{name}", c.static)
	c.handle(Prefix+"{$}", c.sessions)
	c.handle(Prefix+"sessions/{sessionId}", c.timeline)
	c.handle(Prefix+"sessions/{sessionId}/prompt", c.prompt)
	c.handle(Prefix+"sessions/{sessionId}/work", c.work)
	c.handle(Prefix+"sessions/{sessionId}/verify", c.verify)
	c.handle(Prefix+"receipts/{receiptId}", c.receipt)
	c.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, &pageError{status: http.StatusNotFound, code: "route_not_found", message: "no console page " + r.URL.Path})
	})
	return c
}

// ServeHTTP answers a console request with the console's security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	c.mux.ServeHTTP(w, r)
}

// static serves the stylesheet and the script; nothing else of the embedded files, and no
// directory listing.
func (c *Console) static(w http.ResponseWriter, r *http.Request) {
	switch name := r.PathValue("name"); name {
	case "console.css", "console.js":
		http.ServeFileFS(w, r, files, "static/"+name)
	default:
		c.fail(w, &pageError{status: http.StatusNotFound, code: "route_not_found", message: "no console file " + name})
	}
}

// securityHeaders are set on every console answer, the sign-in page's included.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with the
	// sign-in form's POST, which the server's CSRF check must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// handle registers a page: its path ids are checked before it runs, and its error is shown
// as an error page with the code's status.
func (c *Console) handle(pattern string, page func(w http.ResponseWriter, r *http.Request) error) {
	c.mux.HandleFunc("GET "+pattern, func(w http.ResponseWriter, r *http.Request) {
		err := checkIDs(r, "sessionId", "receiptId")
		if err == nil {
			err = page(w, r)
		}
		if err != nil {
			c.fail(w, err)
		}
	})
}

// idPattern is what an id in a console path may be, as the API's (faces/httpapi).
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,200}$`)

func checkIDs(r *http.Request, names ...string) error {
	for _, n := range names {
		if v := r.PathValue(n); v != "" && !idPattern.MatchString(v) {
			return &pageError{status: http.StatusBadRequest, code: "bad_id", message: fmt.Sprintf("%s %q is not an id", n, v)}
		}
	}
	return nil
}

// pageError is a console refusal of its own (a bad id or parameter, no such page).
type pageError struct {
	status        int
	code, message string
}

func (e *pageError) Error() string { return e.code + ": " + e.message }

// errorView is what the error page shows.
type errorView struct {
	Status             int
	Code, Message, Fix string
}

// fail renders err as an error page: its stable code (docs/errors.md), message and fix, with
// the status of its class.
func (c *Console) fail(w http.ResponseWriter, err error) {
	v := errorView{Status: http.StatusInternalServerError, Code: app.CodeOf(err), Message: err.Error()}
	var pe *pageError
	var de *domain.Error
	switch {
	case errors.As(err, &pe):
		v.Status, v.Code, v.Message = pe.status, pe.code, pe.message
	case errors.As(err, &de):
		v.Message, v.Fix = de.Message, de.Fix
	}
	if v.Status == http.StatusInternalServerError {
		v.Status = statusOf(v.Code)
	}
	c.render(w, v.Status, "error", page{Title: "Error", Data: v})
}

// statusOf is the status of an error code's class, as the API answers it.
func statusOf(code string) int {
	switch {
	case strings.HasSuffix(code, "not_found"):
		return http.StatusNotFound
	case code == "invalid_argument" || code == "bad_request" || code == "usage":
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// page is what every template gets: the title, the session it is about (for the navigation),
// and the page's own data.
type page struct {
	Title   string
	Session string
	Data    any
	SignOut bool
}

// render writes a page; a template that fails midway has written part of the page already,
// so its error goes to the end of what was written.
func (c *Console) render(w http.ResponseWriter, status int, name string, p page) {
	p.SignOut = c.signOut && name != "login"
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := c.pages[name].ExecuteTemplate(w, "layout", p); err != nil {
		fmt.Fprintf(w, "<p class=error>%s</p>", template.HTMLEscapeString(err.Error()))
	}
}

// Login renders the console's login page with status and a message (the server's guard shows
// it to a browser without a valid token).
func (c *Console) Login(w http.ResponseWriter, status int, message string) {
	securityHeaders(w.Header())
	c.render(w, status, "login", page{Title: "Sign in", Data: message})
}

// parsePages parses each page template with the shared layout.
func parsePages() map[string]*template.Template {
	names := []string{"sessions", "timeline", "prompt", "receipt", "work", "verify", "error", "login"}
	out := make(map[string]*template.Template, len(names))
	for _, n := range names {
		out[n] = template.Must(template.New(n).Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+n+".html"))
	}
	return out
}
