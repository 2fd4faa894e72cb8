package replay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/model"
)

// ErrorCase is a recorded failure and the typed error a provider must turn it into.
type ErrorCase struct {
	File       string
	Code       string
	Status     int
	RetryAfter time.Duration
	FixHas     string
	// Partial is true when events were streamed before the error.
	Partial bool
}

// CheckError streams req through p, served by srv, and checks the failure against c: a
// *model.Error with the code, status, retry hint and provider name, a fix that says what to
// do, events before it exactly when c.Partial, no cut-off tool call in the partial response,
// and a single request (retries belong to the turn driver, not the adapter).
func CheckError(t *testing.T, p model.Provider, srv *Server, req model.Request, provider string, c ErrorCase) {
	t.Helper()
	var events int
	var err error
	var a model.Accumulator
	for ev, e := range p.Stream(context.Background(), req) {
		if e != nil {
			err = e
			break
		}
		events++
		a.Add(ev)
	}
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want *model.Error", err)
	}
	if me.Code() != c.Code || me.Status != c.Status || me.RetryAfter != c.RetryAfter || me.Provider != provider {
		t.Fatalf("error code %q status %d retryAfter %v provider %q (%v), want %q %d %v %q",
			me.Code(), me.Status, me.RetryAfter, me.Provider, err, c.Code, c.Status, c.RetryAfter, provider)
	}
	if !strings.Contains(me.Fix, c.FixHas) {
		t.Fatalf("fix %q does not contain %q", me.Fix, c.FixHas)
	}
	if (events > 0) != c.Partial {
		t.Fatalf("%d events before the error, partial = %v", events, c.Partial)
	}
	// A call cut off mid-arguments must not come out of the partial response.
	if r := a.Response(); len(r.ToolCalls) != 0 {
		t.Fatalf("partial response has tool calls %+v", r.ToolCalls)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1: retries belong to the turn driver", n)
	}
}
