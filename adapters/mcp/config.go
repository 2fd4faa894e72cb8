package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/zuno-run/zuno/domain"
)

// Transports of a server.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// DefaultTimeout is how long a call (and the start of a server) may take when the server
// sets no timeout; MaxTimeout the most it may set.
const (
	DefaultTimeout = 60 * time.Second
	MaxTimeout     = 10 * time.Minute
)

// Server is one configured MCP server (docs/mcp.md, "Configuration").
type Server struct {
	// Name is the configured name normalised (Normalise): the <server> of mcp_<server>_<tool>.
	// Configured is the key as written.
	Name, Configured string
	Transport        string
	// Command is a stdio server's program and arguments; Environment (env) is added to what
	// a shell command inherits.
	Command     []string
	Environment map[string]string
	// URL and Headers are a streamable HTTP server's endpoint and request headers.
	URL     string
	Headers map[string]string
	Enabled bool
	Timeout time.Duration
}

// entry is one mcp.<name> value as written.
type entry struct {
	Type        string            `json:"type"`
	Command     argv              `json:"command"`
	Environment map[string]string `json:"env"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	Enabled     *bool             `json:"enabled"`
	Timeout     *int64            `json:"timeout"`
}

// ParseServers reads the merged mcp setting: an object of server name to entry. The servers
// come back sorted by name. A fault is a CodeBadServer error naming mcp.<name>.<key>.
func ParseServers(raw json.RawMessage) ([]Server, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, bad("mcp", "is not an object of server names", `write {"mcp": {"name": {"command": ["prog", "arg"]}}}`)
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Server, 0, len(names))
	seen := map[string]string{}
	for _, n := range names {
		s, err := parseServer(n, entries[n])
		if err != nil {
			return nil, err
		}
		if other, dup := seen[s.Name]; dup {
			e := domain.NewError(CodeServerNameCollision, fmt.Sprintf("servers %q and %q both become %q in tool names", other, n, s.Name),
				"rename one of them: tool names are mcp_<server>_<tool>, with the server name in lower case and every character but a-z, 0-9 and _ as _")
			e.Field = "mcp." + n
			return nil, e
		}
		seen[s.Name] = n
		out = append(out, s)
	}
	return out, prefixCollision(out)
}

// prefixCollision refuses a server whose name is another's followed by _: a rule or allowlist
// entry for the shorter (mcp_github_*) would match every tool of the longer (mcp_github_x_…),
// so a server a checked-in file declares would inherit the user's allow (docs/mcp.md).
func prefixCollision(servers []Server) error {
	for _, a := range servers {
		for _, b := range servers {
			if strings.HasPrefix(b.Name, a.Name+"_") {
				e := domain.NewError(CodeServerNameCollision, fmt.Sprintf("server %q's tools would match every rule for server %q (mcp_%s_*)", b.Configured, a.Configured, a.Name),
					"rename one of them so that neither name is the other's followed by _")
				e.Field = "mcp." + b.Configured
				return e
			}
		}
	}
	return nil
}

func parseServer(name string, raw json.RawMessage) (Server, error) {
	field := "mcp." + name
	s := Server{Configured: name, Name: Normalise(strings.ToLower(name)), Enabled: true, Timeout: DefaultTimeout}
	if s.Name == "" || len(s.Name) > 32 {
		return s, bad(field, "is not a server name of 1 to 32 characters", "name the server with letters, digits, - and _")
	}
	var e entry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return s, bad(field, "is not a server entry: "+err.Error(),
			"give type, command, env, url, headers, enabled and timeout only")
	}
	if e.Enabled != nil {
		s.Enabled = *e.Enabled
	}
	if e.Timeout != nil {
		t := time.Duration(*e.Timeout) * time.Millisecond
		if t < time.Second || t > MaxTimeout {
			return s, bad(field+".timeout", fmt.Sprintf("%d ms is outside 1000..=%d", *e.Timeout, MaxTimeout.Milliseconds()), "give the timeout in milliseconds")
		}
		s.Timeout = t
	}
	switch {
	case len(e.Command) > 0 && e.URL != "":
		return s, bad(field, "has both command and url", "give command for a local (stdio) server or url for a remote one")
	case len(e.Command) > 0:
		if e.Type != "" && e.Type != "local" && e.Type != TransportStdio {
			return s, bad(field+".type", fmt.Sprintf("is %q with a command", e.Type), `leave type out, or write "local"`)
		}
		if e.Headers != nil {
			return s, bad(field+".headers", "applies to a remote server only", "leave headers out")
		}
		for i, a := range e.Command {
			if strings.ContainsRune(a, 0) || (i == 0 && strings.TrimSpace(a) == "") {
				return s, bad(fmt.Sprintf("%s.command[%d]", field, i), "is empty or holds NUL", "name the program and its arguments")
			}
		}
		s.Transport, s.Command, s.Environment = TransportStdio, e.Command, e.Environment
	case e.URL != "":
		if e.Type != "" && e.Type != "remote" && e.Type != TransportHTTP {
			return s, bad(field+".type", fmt.Sprintf("is %q with a url", e.Type), `leave type out, or write "remote"`)
		}
		if e.Environment != nil {
			return s, bad(field+".env", "applies to a local server only", "leave env out")
		}
		if err := checkURL(field+".url", e.URL); err != nil {
			return s, err
		}
		s.Transport, s.URL, s.Headers = TransportHTTP, e.URL, e.Headers
	default:
		return s, bad(field, "has neither command nor url", `give "command": ["prog", "arg"] or "url": "https://…"`)
	}
	return s, nil
}

// checkURL admits an http(s) URL with a host and without credentials (a key belongs in
// headers, which are never logged).
func checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad(field, "is not an http:// or https:// URL", "give the server's streamable HTTP endpoint")
	}
	if u.User != nil {
		return bad(field, "carries credentials", `move them to "headers" (an Authorization header): URLs are recorded, headers are not`)
	}
	return nil
}

func bad(field, msg, fix string) error {
	e := domain.NewError(CodeBadServer, field+" "+msg, fix)
	e.Field = field
	return e
}

// argv is a command as written: an array of the program and its arguments, or a string that
// names the program alone, as the configuration examples of the specification write it
// ("command": "node"). A string with white space is refused rather than split: whether
// "npx server" is one program or two words is not for Zuno to guess.
type argv []string

func (a *argv) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		if strings.IndexFunc(one, unicode.IsSpace) >= 0 {
			return errors.New("command is a string with spaces: write it as an array of the program and its arguments")
		}
		*a = argv{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("command is neither a string nor an array of strings")
	}
	*a = many
	return nil
}
