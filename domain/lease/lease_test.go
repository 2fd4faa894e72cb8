package lease

import (
	"errors"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func fold(t *testing.T, ps ...events.Payload) State {
	t.Helper()
	var s State
	for _, p := range ps {
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func leased(turn, holder string, until time.Time) events.TurnLeased {
	return events.TurnLeased{SessionID: "s", TurnID: turn, Holder: holder, ExpiresAt: until.Format(time.RFC3339Nano)}
}

func code(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Code()
	}
	return ""
}

// Each sentence of docs/turns.md "Leases" that the aggregate decides, as a row.
func TestTake(t *testing.T) {
	ttl := 30 * time.Second
	for _, tc := range []struct {
		name     string
		history  []events.Payload
		take     Take
		wantCode string
		tookOver string
	}{
		{name: "a session with no lease is taken", take: Take{TurnID: "t1", Holder: "A"}},
		{name: "a live lease of another holder refuses", history: []events.Payload{leased("t1", "A", t0.Add(ttl))},
			take: Take{TurnID: "t2", Holder: "B"}, wantCode: CodeLeaseHeld},
		{name: "an expired lease is taken over", history: []events.Payload{leased("t1", "A", t0.Add(-time.Second))},
			take: Take{TurnID: "t1", Holder: "B"}, tookOver: "A"},
		{name: "expiry is exclusive: at the instant it expires it binds no one", history: []events.Payload{leased("t1", "A", t0)},
			take: Take{TurnID: "t2", Holder: "B"}, tookOver: "A"},
		{name: "a holder known dead is taken over before expiry", history: []events.Payload{leased("t1", "A", t0.Add(ttl))},
			take: Take{TurnID: "t1", Holder: "B", Dead: true}, tookOver: "A"},
		{name: "the same holder and turn renew", history: []events.Payload{leased("t1", "A", t0.Add(ttl))},
			take: Take{TurnID: "t1", Holder: "A"}},
		{name: "the same holder with another turn waits like anyone", history: []events.Payload{leased("t1", "A", t0.Add(ttl))},
			take: Take{TurnID: "t2", Holder: "A"}, wantCode: CodeLeaseHeld},
		{name: "a released lease binds no one and is not a takeover",
			history: []events.Payload{leased("t1", "A", t0.Add(ttl)), events.TurnLeaseReleased{TurnID: "t1", Holder: "A"}},
			take:    Take{TurnID: "t2", Holder: "B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.take.SessionID, tc.take.Now, tc.take.TTL = "s", t0, ttl
			ps, err := Decide(fold(t, tc.history...), tc.take)
			if code(err) != tc.wantCode {
				t.Fatalf("err %v, want code %q", err, tc.wantCode)
			}
			if tc.wantCode != "" {
				return
			}
			l := ps[0].(events.TurnLeased)
			if l.Holder != tc.take.Holder || l.TookOver != tc.tookOver || l.ExpiresAt != t0.Add(ttl).Format(time.RFC3339Nano) {
				t.Fatalf("leased %+v, want holder %s until %v, took over %q", l, tc.take.Holder, t0.Add(ttl), tc.tookOver)
			}
		})
	}
	if _, err := Decide(State{}, Take{TurnID: "t", Holder: "A", Now: t0}); code(err) != domain.CodeInvalidArgument {
		t.Fatalf("a lease of no length: %v", err)
	}
}

func TestRenewAndRelease(t *testing.T) {
	ttl := 30 * time.Second
	s := fold(t, leased("t1", "A", t0.Add(-time.Second)), leased("t1", "B", t0.Add(ttl)))
	if _, err := Renew(s, Take{SessionID: "s", TurnID: "t1", Holder: "A", Now: t0, TTL: ttl}); code(err) != CodeLeaseLost {
		t.Fatalf("the old holder renews a lease taken over: %v, want %s", err, CodeLeaseLost)
	}
	if ps, err := Renew(s, Take{SessionID: "s", TurnID: "t1", Holder: "B", Now: t0, TTL: ttl}); err != nil || len(ps) != 1 {
		t.Fatalf("the holder renews: %v %v", ps, err)
	}
	if ps := Release(s, "s", "t1", "A"); ps != nil {
		t.Fatalf("a holder that lost the lease releases nothing: %v", ps)
	}
	ps := Release(s, "s", "t1", "B")
	if len(ps) != 1 {
		t.Fatalf("the holder releases: %v", ps)
	}
	if s := fold(t, leased("t1", "B", t0.Add(ttl)), ps[0]); s.Live(t0) || Release(s, "s", "t1", "B") != nil {
		t.Fatal("a released lease is not live, and is released once")
	}
	if _, err := Renew(fold(t, leased("t1", "B", t0.Add(ttl)), ps[0]), Take{SessionID: "s", TurnID: "t1", Holder: "B", Now: t0, TTL: ttl}); code(err) != CodeLeaseLost {
		t.Fatalf("renewing a released lease: %v", err)
	}
}

func TestInterrupt(t *testing.T) {
	live := fold(t, leased("t1", "A", t0.Add(time.Minute)))
	ps, err := Interrupt(live, "s", "", "user", t0)
	if err != nil || len(ps) != 1 || ps[0].(events.TurnInterruptRequested).TurnID != "t1" {
		t.Fatalf("interrupt of the running turn: %v %v", ps, err)
	}
	if again, err := Interrupt(fold(t, leased("t1", "A", t0.Add(time.Minute)), ps[0]), "s", "t1", "user", t0); err != nil || again != nil {
		t.Fatalf("asking twice records nothing more: %v %v", again, err)
	}
	// A turn held anew (resumed after a suspension, taken over) may be asked to stop again;
	// a renewal of the same hold does not forget the request.
	asked := []events.Payload{leased("t1", "A", t0.Add(time.Minute)), ps[0]}
	renewed := fold(t, append(asked, leased("t1", "A", t0.Add(2*time.Minute)))...)
	if again, _ := Interrupt(renewed, "s", "t1", "user", t0); again != nil {
		t.Errorf("a renewal forgot the interrupt asked of its hold: %v", again)
	}
	resumed := fold(t, append(asked, events.TurnLeaseReleased{TurnID: "t1", Holder: "A"}, leased("t1", "B", t0.Add(time.Minute)))...)
	if again, err := Interrupt(resumed, "s", "t1", "user", t0); err != nil || len(again) != 1 {
		t.Errorf("a turn held anew cannot be interrupted: %v %v", again, err)
	}
	for name, s := range map[string]State{
		"no lease":      {},
		"another turn":  live,
		"expired lease": fold(t, leased("t1", "A", t0.Add(-time.Second))),
		"released":      fold(t, leased("t1", "A", t0.Add(time.Minute)), events.TurnLeaseReleased{TurnID: "t1", Holder: "A"}),
	} {
		turn := "t1"
		if name == "another turn" {
			turn = "t9"
		}
		if _, err := Interrupt(s, "s", turn, "user", t0); code(err) != CodeTurnNotRunning {
			t.Errorf("%s: %v, want %s", name, err, CodeTurnNotRunning)
		}
	}
}

func TestEvolveRefusesStrangers(t *testing.T) {
	var s State
	if err := s.Evolve(events.SessionTitled{}); code(err) != domain.CodeUnexpectedEvent {
		t.Fatalf("a session event in the lease fold: %v", err)
	}
	if err := s.Evolve(events.TurnLeased{TurnID: "t", Holder: "A", ExpiresAt: "soon"}); err == nil {
		t.Fatal("a lease with an unreadable expiry folds")
	}
}

func TestHolderHost(t *testing.T) {
	for holder, want := range map[string]string{"vm/4242/9f3a": "vm", "build-01.example/1/x": "build-01.example", "": "", "bare": "bare"} {
		if got := HolderHost(holder); got != want {
			t.Errorf("HolderHost(%q) = %q, want %q", holder, got, want)
		}
	}
}
