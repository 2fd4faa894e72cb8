package events

// The lease of a running turn (stream lease-<turnId>): which process drives the
// turn and until when, renewed while it runs, so that any process may take over a turn whose
// holder stopped renewing; and the requests to interrupt it (docs/turns.md, "Leases"). The
// stream is its own aggregate so that renewals and interrupts never race the turn's appends to
// the session stream.
const (
	TypeTurnLeased             = "session.turn.leased.1"
	TypeTurnLeaseReleased      = "session.turn.lease_released.1"
	TypeTurnInterruptRequested = "session.turn.interrupt_requested.1"
)

// TurnLeased is a lease taken, taken over, or renewed: Holder drives turn TurnID until
// ExpiresAt (RFC 3339, UTC) unless it renews.
type TurnLeased struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	// Holder names the process: host, pid and a random part, unique per process.
	Holder    string `json:"holder"`
	ExpiresAt string `json:"expiresAt"`
	// TookOver names the holder whose lease had expired when this one was taken.
	TookOver string `json:"tookOver,omitempty"`
}

func (TurnLeased) EventType() string { return TypeTurnLeased }

// TurnLeaseReleased ends a lease: its turn is over.
type TurnLeaseReleased struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Holder    string `json:"holder"`
}

func (TurnLeaseReleased) EventType() string { return TypeTurnLeaseReleased }

// TurnInterruptRequested asks the holder of a running turn to stop it (InterruptTurn); the
// holder records the interruption on the turn itself.
type TurnInterruptRequested struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	// By is who asked: user, or a process.
	By string `json:"by"`
}

func (TurnInterruptRequested) EventType() string { return TypeTurnInterruptRequested }
