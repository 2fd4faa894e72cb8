package httpapi

import (
	"net/http"
	"time"

	"github.com/zuno-run/zuno/faces/console"
)

// consoleCookie holds a browser's bearer token for the audit console (docs/console.md): a
// browser cannot add an Authorization header to a page it navigates to, nor to an
// EventSource. The cookie is HttpOnly (no script reads it) and SameSite=Strict (no other
// site's page sends it), and it is taken for reads only (GET and HEAD): every write still
// needs the header.
const consoleCookie = "zuno_console"

// mountConsole serves the audit console under /console/, behind the server's authentication:
// a browser without a valid token gets the sign-in page, which sets the cookie.
func (s *Server) mountConsole() {
	pages := console.New(s.app, s.tokens.Len() > 0)
	s.mux.Handle("GET /console", http.RedirectHandler(console.Prefix, http.StatusSeeOther))
	s.mux.Handle("GET "+console.Prefix, s.consolePage(pages, pages))
	s.mux.Handle("POST "+console.Prefix+"login", s.consoleLogin(pages))
	s.mux.Handle("POST "+console.Prefix+"logout", http.HandlerFunc(consoleLogout))
}

// consoleLogout is POST /console/logout: the browser forgets the console cookie. Refused from
// another origin, so no other site can sign the user out.
func consoleLogout(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r); err != nil {
		writeError(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, console.Prefix, http.StatusSeeOther)
}

// consolePage is guard for a page: authentication, then the page; a refusal is the sign-in
// page rather than JSON.
func (s *Server) consolePage(pages *console.Console, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		actor, err := s.authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="zuno"`)
			pages.Login(w, http.StatusUnauthorized, "")
		} else {
			next.ServeHTTP(w, r)
		}
		s.logf("%s %s %s %s", r.Method, r.URL.Path, orDash(actor), time.Since(start).Round(time.Microsecond))
	})
}

// consoleLogin is POST /console/login: a token from the sign-in form, checked as a bearer
// token, kept in the console cookie for the browser's session.
func (s *Server) consoleLogin(pages *console.Console) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if err := sameOrigin(r); err != nil {
			writeError(w, err)
			return
		}
		token := r.PostFormValue("token")
		name, ok := s.tokens.Match(token)
		if s.tokens.Len() == 0 || !ok {
			s.logf("POST /console/login - refused")
			pages.Login(w, http.StatusUnauthorized, "That token is not one this server accepts.")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: token, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		s.logf("POST /console/login http:%s", name)
		http.Redirect(w, r, console.Prefix, http.StatusSeeOther)
	})
}

// cookieToken is the console cookie's token on a read (GET, HEAD), for a request without an
// Authorization header.
func cookieToken(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return "", false
	}
	c, err := r.Cookie(consoleCookie)
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}
