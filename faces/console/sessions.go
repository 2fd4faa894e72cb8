package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/events"
)

// pageSize is how many sessions one page of the list shows unless ?per=N says otherwise, up
// to maxPageSize.
const (
	pageSize    = 50
	maxPageSize = 500
)

// sessionRow is one session of the list.
type sessionRow struct {
	ID, Title, Agent, Status, Parent, Created, Updated string
	Messages                                           string
}

// sessionsView is the list page: the filter as asked, the rows, and the links to the pages
// beside it ("" when there is none).
type sessionsView struct {
	Filter       queries.SessionFilter
	Page         int
	Rows         []sessionRow
	Prev, Next   string
	StatusChoice []string
}

// statusChoices are the statuses the filter offers: a session's status is open, suspended,
// how its latest turn finished, or how it was pruned (docs/readmodels.md).
var statusChoices = []string{"", "all", "open", events.FinishCompleted, events.FinishFailed, events.FinishInterrupted, events.FinishStepLimit,
	"suspended", "archived", "deleted"}

// sessions is GET /console/?status=&agent=&q=&page=N&per=M: the sessions, newest first, filtered
// and paged in the read models.
func (c *Console) sessions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	n := 1
	if v := q.Get("page"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 100000 {
			return &pageError{status: http.StatusBadRequest, code: "bad_request", message: fmt.Sprintf("page %q is not a page number", v)}
		}
		n = p
	}
	size := pageSize
	if v := q.Get("per"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > maxPageSize {
			return &pageError{status: http.StatusBadRequest, code: "bad_request", message: fmt.Sprintf("per %q is not a number from 1 to %d", v, maxPageSize)}
		}
		size = p
	}
	f := queries.SessionFilter{Status: q.Get("status"), Agent: q.Get("agent"), Title: q.Get("q"), Offset: (n - 1) * size, Limit: size}
	t, more, err := c.app.Queries.SessionPage(r.Context(), f)
	if err != nil {
		return err
	}
	v := sessionsView{Filter: f, Page: n, StatusChoice: statusChoices}
	for _, row := range t.Rows {
		v.Rows = append(v.Rows, sessionRowOf(t.Columns, row))
	}
	if n > 1 {
		v.Prev = pageLink(q, n-1)
	}
	if more {
		v.Next = pageLink(q, n+1)
	}
	c.render(w, http.StatusOK, "sessions", page{Title: "Sessions", Data: v})
	return nil
}

// sessionRowOf reads a row of the session list by column name.
func sessionRowOf(columns []string, row []any) sessionRow {
	get := func(name string) string {
		for i, c := range columns {
			if c == name && row[i] != nil {
				return text(row[i])
			}
		}
		return ""
	}
	return sessionRow{ID: get("id"), Title: get("title"), Agent: get("agent"), Status: get("status"), Parent: get("parent_session_id"),
		Messages: get("message_count"), Created: get("time_created"), Updated: get("time_updated")}
}

// text is a read-model value as text: bytes as a string, anything else as Go prints it.
func text(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// pageLink is the list's URL with the same filters on page n; html/template escapes it again
// where it is written.
func pageLink(q url.Values, n int) string {
	next := url.Values{}
	for k, vs := range q {
		next[k] = vs
	}
	next.Set("page", strconv.Itoa(n))
	return Prefix + "?" + next.Encode()
}
