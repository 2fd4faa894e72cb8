package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
)

// TokenEnv is the variable a single bearer token is read from; its name is "env".
const TokenEnv = "ZUNO_SERVER_TOKEN"

// TokensFileName is the server's token file in Zuno's data directory, beside the provider
// keys' auth.json (docs/config.md, "Provider keys"; docs/server.md, "Authentication").
const TokensFileName = "server-tokens.json"

// Codes of the server's refusals (docs/errors.md).
const (
	// CodeUnauthorized: a request without a valid bearer token, where one is required.
	CodeUnauthorized = "unauthorized"
	// CodeCrossOrigin: a browser write from another origin (CSRF).
	CodeCrossOrigin = "cross_origin"
	// CodeBindRefused: a non-loopback listen address with no token to require.
	CodeBindRefused = "bind_refused"
	// CodeTokensFile: the token file is unreadable, malformed or open to others.
	CodeTokensFile = "server_tokens_file"
)

// Tokens are the bearer tokens the server accepts, each with the name recorded as the actor
// of the writes made with it (http:<name>). Only the tokens' SHA-256 digests are kept, so
// every comparison is of equal-length values.
type Tokens struct {
	names   []string
	digests [][sha256.Size]byte
}

// Len is the number of tokens.
func (t *Tokens) Len() int { return len(t.names) }

// Add accepts token under name.
func (t *Tokens) Add(name, token string) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n:") {
		return fmt.Errorf("token name %q: use a non-empty name without spaces or ':'", name)
	}
	if len(token) < 16 {
		return fmt.Errorf("token %q is shorter than 16 characters: use a long random value (openssl rand -hex 32)", name)
	}
	t.names = append(t.names, name)
	t.digests = append(t.digests, sha256.Sum256([]byte(token)))
	return nil
}

// Match returns the name of the token presented, comparing against every token in constant
// time so the time taken says nothing about which token or how much of one matched.
func (t *Tokens) Match(presented string) (string, bool) {
	d := sha256.Sum256([]byte(presented))
	found := -1
	for i := range t.digests {
		if subtle.ConstantTimeCompare(d[:], t.digests[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false
	}
	return t.names[found], true
}

// LoadTokens reads the tokens from the environment (getenv(TokenEnv), named "env") and from
// the token file at path, {"tokens": {"<name>": "<token>", ...}}. A missing file is no
// tokens; a file anyone but its owner may read or write is refused, as the auth file is: its
// tokens must be assumed seen.
func LoadTokens(getenv func(string) string, path string) (*Tokens, error) {
	t := &Tokens{}
	if v := getenv(TokenEnv); v != "" {
		if err := t.Add("env", v); err != nil {
			return nil, tokensError(TokenEnv, err.Error(), "set "+TokenEnv+" to a long random value")
		}
	}
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, tokensError(path, err.Error(), "make the file readable by its owner")
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, tokensError(path, fmt.Sprintf("is mode %04o: others may read or change its tokens", st.Mode().Perm()),
			"chmod 600 "+path+" and replace every token in it")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, tokensError(path, err.Error(), "make the file readable by its owner")
	}
	var f struct {
		Tokens map[string]string `json:"tokens"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, tokensError(path, "is not valid: "+err.Error(), `write {"tokens": {"NAME": "TOKEN"}}`)
	}
	names := make([]string, 0, len(f.Tokens))
	for n := range f.Tokens {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := t.Add(n, f.Tokens[n]); err != nil {
			return nil, tokensError(path, err.Error(), "fix the token named in the file")
		}
	}
	return t, nil
}

// Error is a refusal of the server with its code, the problem and the fix.
type Error struct {
	code, Message, Fix string
}

func (e *Error) Error() string { return e.code + ": " + e.Message + "; " + e.Fix }

// Code returns the stable code.
func (e *Error) Code() string { return e.code }

func tokensError(where, problem, fix string) *Error {
	return &Error{code: CodeTokensFile, Message: where + " " + problem, Fix: fix}
}

// CheckBind refuses to listen on a non-loopback address without a token: anyone who can reach
// the port could drive the agent's tools otherwise.
func CheckBind(addr string, tokens *Tokens) error {
	if Loopback(addr) || tokens.Len() > 0 {
		return nil
	}
	return &Error{code: CodeBindRefused,
		Message: fmt.Sprintf("--listen %s is reachable from other machines and no token is configured", addr),
		Fix:     "set " + TokenEnv + " or write the token file, or listen on 127.0.0.1"}
}

// Loopback reports whether a listen address binds only the loopback interface: an IP literal
// in 127.0.0.0/8 or ::1, or the name localhost. An empty host binds every interface.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// actorLocal is the actor of a write on a loopback server with no tokens: the user's own
// machine, as the CLI's writes are the user's.
const actorLocal = "http:local"

// authenticate returns the actor of r: http:<token name> for a valid bearer token, http:local
// when the server requires none. The token is never logged or echoed.
func (s *Server) authenticate(r *http.Request) (string, error) {
	if s.tokens.Len() == 0 {
		return actorLocal, nil
	}
	h := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if h == "" { // a browser's read of the console, or its event stream (console.go)
		token, ok = cookieToken(r)
	}
	if !ok || token == "" {
		return "", &Error{code: CodeUnauthorized, Message: "no bearer token", Fix: "send Authorization: Bearer <token>"}
	}
	name, ok := s.tokens.Match(token)
	if !ok {
		return "", &Error{code: CodeUnauthorized, Message: "the bearer token is not valid", Fix: "send a token the server was configured with"}
	}
	return "http:" + name, nil
}

// sameOrigin refuses a browser's write from another origin (CSRF): a page elsewhere can make
// the user's browser POST here, but the browser says so in Sec-Fetch-Site or Origin. Clients
// that are not browsers send neither and pass.
func sameOrigin(r *http.Request) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return nil
	}
	site := r.Header.Get("Sec-Fetch-Site")
	if site != "" && site != "same-origin" && site != "none" {
		return crossOrigin("Sec-Fetch-Site: " + site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	if origin == "null" || !strings.EqualFold(strings.TrimPrefix(strings.TrimPrefix(origin, "http://"), "https://"), r.Host) {
		return crossOrigin("Origin: " + origin)
	}
	return nil
}

func crossOrigin(what string) error {
	return &Error{code: CodeCrossOrigin, Message: "a write from another origin (" + what + ")",
		Fix: "call the API from a client, not a page on another site; CORS is closed"}
}
