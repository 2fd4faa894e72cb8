package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/zuno-run/zuno/domain"
)

// Error classes of a failed search.
const (
	ClassTransport = "transport"
	ClassTimeout   = "timeout"
	ClassAuth      = "auth"
	ClassRateLimit = "rate_limited"
	ClassStatus    = "status"
	ClassDecode    = "decode"
	ClassCancelled = "cancelled"
)

// maxResponse bounds a provider's answer.
const maxResponse = 4 << 20

// Diagnostic is everything an error or log line says about a search: the endpoint without its
// query string or credentials, the status and a class. It has no field that could hold the
// key, a header or the query.
type Diagnostic struct {
	Provider string `json:"provider"`
	Scheme   string `json:"scheme"`
	Host     string `json:"host"`
	Path     string `json:"path"`
	Status   int    `json:"status,omitempty"`
	Class    string `json:"class,omitempty"`
}

func (d Diagnostic) String() string {
	s := fmt.Sprintf("provider %s, %s://%s%s", d.Provider, d.Scheme, d.Host, d.Path)
	if d.Status != 0 {
		s += ", status " + strconv.Itoa(d.Status)
	}
	if d.Class != "" {
		s += ", class " + d.Class
	}
	return s
}

// Error is a failed search: its diagnostic only. The cause is kept out on purpose: net/http's
// errors quote the whole request URL, query string included.
type Error struct{ Diagnostic }

func (e *Error) Error() string {
	return domain.FormatError(CodeSearchFailed, "", "", "the search failed ("+e.Diagnostic.String()+")", "try again later, or fetch a known URL with webfetch")
}

// Code is the stable code.
func (e *Error) Code() string { return CodeSearchFailed }

// SearxNG speaks SearxNG's JSON API: GET <url>?q=…&format=json, the key as a bearer token.
type SearxNG struct {
	endpoint *url.URL
	key      string
	client   *http.Client
	// Log receives one line per search (the diagnostic and the elapsed time); nil logs
	// nothing.
	Log *slog.Logger
}

// NewSearxNG returns the provider for endpoint (http or https, without credentials).
func NewSearxNG(endpoint, key string) (*SearxNG, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, domain.NewError(CodeSearchConfig, "web_search.url is not an http(s) URL without credentials",
			"set web_search.url to the search endpoint, such as https://search.example/search, and the key in web_search.apiKey")
	}
	return &SearxNG{endpoint: u, key: key, client: &http.Client{Timeout: 30 * time.Second,
		// A redirect would carry the query on to a host the configuration did not name.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

func (s *SearxNG) Name() string  { return "searxng" }
func (s *SearxNG) Network() bool { return true }

// Search runs one query.
func (s *SearxNG) Search(ctx context.Context, q Query) ([]Hit, error) {
	d := Diagnostic{Provider: s.Name(), Scheme: s.endpoint.Scheme, Host: s.endpoint.Host, Path: s.endpoint.EscapedPath()}
	start := time.Now()
	hits, err := s.search(ctx, q, &d)
	if s.Log != nil {
		s.Log.LogAttrs(ctx, slog.LevelInfo, "web_search", slog.String("provider", d.Provider), slog.String("scheme", d.Scheme),
			slog.String("host", d.Host), slog.String("path", d.Path), slog.Int("status", d.Status), slog.String("class", d.Class),
			slog.Duration("elapsed", time.Since(start)))
	}
	return hits, err
}

func (s *SearxNG) search(ctx context.Context, q Query, d *Diagnostic) ([]Hit, error) {
	u := *s.endpoint
	v := u.Query()
	v.Set("q", q.Text)
	v.Set("format", "json")
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		d.Class = ClassTransport
		return nil, &Error{*d}
	}
	req.Header.Set("Accept", "application/json")
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		d.Class = transportClass(ctx, err)
		return nil, &Error{*d}
	}
	defer resp.Body.Close()
	d.Status = resp.StatusCode
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		d.Class = ClassAuth
	case resp.StatusCode == http.StatusTooManyRequests:
		d.Class = ClassRateLimit
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		d.Class = ClassStatus
	}
	if d.Class != "" {
		return nil, &Error{*d}
	}
	var body struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(&body); err != nil {
		d.Class = transportClass(ctx, err)
		if d.Class == ClassTransport {
			d.Class = ClassDecode
		}
		return nil, &Error{*d}
	}
	var hits []Hit
	for _, r := range body.Results {
		if q.Limit > 0 && len(hits) == q.Limit {
			break
		}
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return hits, nil
}

func transportClass(ctx context.Context, err error) string {
	var ne interface{ Timeout() bool }
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return ClassCancelled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	}
	return ClassTransport
}
