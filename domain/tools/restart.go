package tools

// Recorded is what the log holds about one tool call when a crashed run is recovered: it was
// requested, and perhaps started and settled. A blocked call is settled without starting.
type Recorded struct {
	ID               string
	Started, Settled bool
}

// Recovery is a restart's verdict on the calls that were cut short. Calls already settled
// are left as they are and appear in neither list.
type Recovery struct {
	// Uncertain calls started and never settled: their effect may or may not have happened.
	// They are settled as uncertain and never replayed; the model is told to check the
	// authoritative state before deciding on a retry.
	Uncertain []string
	// Cancelled calls were requested and never started, so nothing ran. They are settled as
	// cancelled (not run), the way a queued job that never started is settled, and are not
	// started after the restart either: the next step belongs to the model (see "The restart
	// rule" in docs/turns.md).
	Cancelled []string
}

// Recover applies the restart rule to recorded calls, keeping their order.
func Recover(calls []Recorded) Recovery {
	var r Recovery
	for _, c := range calls {
		switch {
		case c.Settled:
		case c.Started:
			r.Uncertain = append(r.Uncertain, c.ID)
		default:
			r.Cancelled = append(r.Cancelled, c.ID)
		}
	}
	return r
}
