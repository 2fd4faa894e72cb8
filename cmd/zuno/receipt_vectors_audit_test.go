package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/events"
)

// The one-pass audit (`zuno verify --wire`: the Auditor's short path, the walk that checks a
// receipt while later events are still being read) agrees with the receipt query `debug
// prompt` runs for each step, on the vector session (a fork, ten compactions, a failed
// request, a blocked call) and on it altered at random bytes, half of them letters or digits
// of a receipt: a receipt mismatch the audit reports is the reference's first failing receipt,
// with its code, and a receipt the reference fails is never passed by the audit (its session
// reports a fault at or before it). The audit may report faults outside the receipt check's
// scope first (a request naming a receipt that is not the latest, an event that does not
// decode, a fork whose source changed).
func TestAuditAgreesWithTheReceiptQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: -short: 40 alterations, each checked step by step, take about 20 s")
	}
	var session vectorFile
	readJSON(t, filepath.Join(vectorsDir, "session.json"), &session)
	check := func(name string, lines []eventLine) {
		t.Helper()
		_, want := goReceipts(t, lines)
		faults, ok := auditSessions(t, lines)
		if !ok {
			return // the store refuses the event: neither check reads the session
		}
		posOf := map[string]uint64{}
		streamOf := map[string]string{}
		for _, l := range lines {
			posOf[l.EventID], streamOf[l.EventID] = l.Position, l.Stream
		}
		for s, f := range faults {
			if outsideReceipts(f.Code) {
				continue
			}
			if want == nil || want.EventID != f.EventID || !strings.Contains(want.Code, f.Code) {
				t.Errorf("%s: the audit of %s reports %s at %s (%s); the receipt query: %+v", name, s, f.Code, f.EventID, f.Detail, want)
			}
		}
		if want != nil && !strings.Contains(want.Code, "event_undecodable") {
			// A fault that stops the session's load has no position: it is before everything.
			f, ok := faults[streamOf[want.EventID]]
			if !ok || (f.Position != 0 && f.Position > posOf[want.EventID]) {
				t.Errorf("%s: the receipt query fails receipt %s (%s); the audit of its session: %+v", name, want.EventID, want.Code, f)
			}
		}
	}
	check("the session", session.Events)
	rng := rand.New(rand.NewPCG(32, 7))
	const alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for n := 0; n < 40; {
		l := session.Events[rng.IntN(len(session.Events))]
		inReceipt := n%2 == 1
		if !strings.HasPrefix(l.Stream, "session-") || (inReceipt && l.Type != events.TypePromptAssembled) {
			continue
		}
		i, b := rng.IntN(len(l.Data)), byte(0x20+rng.IntN(0x5f))
		if inReceipt {
			if b = alnum[rng.IntN(len(alnum))]; !strings.ContainsRune(alnum, rune(l.Data[i])) {
				continue
			}
		}
		if l.Data[i] >= 0x80 || l.Data[i] == b {
			continue
		}
		n++
		c := change{EventID: l.EventID, Find: l.Data, Replace: l.Data[:i] + string(b) + l.Data[i+1:]}
		check(fmt.Sprintf("%s altered at byte %d", l.EventID, i), c.apply(t, session.Events))
	}
}

// outsideReceipts reports whether an audit fault's code is beyond what the receipt query
// checks.
func outsideReceipts(code string) bool {
	return slices.Contains([]string{queries.CodeReceiptMissing, queries.CodeEventUndecodable, queries.CodeForkSource,
		queries.CodeWireMismatch, queries.CodeWireUnverifiable}, code)
}

// auditSessions loads the events as goReceipts does and audits every session stream; false
// when the store refuses an event.
func auditSessions(t *testing.T, lines []eventLine) (map[string]*queries.AuditFault, bool) {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	defer store.Close()
	var sessions []string
	for _, l := range lines {
		var md events.Metadata
		if err := json.Unmarshal([]byte(l.Metadata), &md); err != nil {
			t.Fatal(err)
		}
		md.Hash = ""
		expected := events.NoStream
		if l.Revision > 0 {
			expected = events.Exact(l.Revision - 1)
		}
		if _, err := store.Append(ctx, l.Stream, expected, events.Event{ID: l.EventID, Type: l.Type, Data: json.RawMessage(l.Data), Metadata: md}); err != nil {
			return nil, false
		}
		if s, ok := strings.CutPrefix(l.Stream, "session-"); ok && !slices.Contains(sessions, s) {
			sessions = append(sessions, s)
		}
	}
	q := queries.New(store, events.NewRegistry(events.AllPayloads()...), nil, nil)
	faults := map[string]*queries.AuditFault{}
	for _, s := range sessions {
		a, err := q.AuditSession(ctx, s, provider.NewWireSums().Sum)
		if err != nil {
			t.Fatalf("audit %s: %v", s, err)
		}
		if a.Fault != nil {
			faults["session-"+s] = a.Fault
		}
	}
	return faults, true
}
