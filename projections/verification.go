package projections

import (
	"context"
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// VerificationReceipts is the "verification_receipt" table: one row per shell call's
// verification receipt, with what forensic SQL asks of it (verdict, exit code, coverage,
// authority, the constructs that made a claim derived). The receipt itself stays in the event
// log, which `zuno debug receipt` reads; the row finds it by id. Where the read models share
// the log's database, the table is a view over event_log with these same columns
// (adapters/readmodel), and the projector writes nothing.
type VerificationReceipts struct{}

func (VerificationReceipts) Name() string     { return "verification_receipt" }
func (VerificationReceipts) Tables() []string { return []string{"verification_receipt"} }

func (VerificationReceipts) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	e, ok := p.(events.VerificationReceipt)
	if !ok || tx.IsView("verification_receipt") {
		return nil
	}
	constructs := make([]string, 0, len(e.Limitations))
	for _, l := range e.Limitations {
		constructs = append(constructs, l.Construct)
	}
	cj, err := json.Marshal(constructs)
	if err != nil {
		return err
	}
	var code any
	if e.ExitCode != nil {
		code = *e.ExitCode
	}
	return tx.Exec(ctx, `INSERT INTO verification_receipt (id, session_id, turn_id, call_id, event_id, command, interpreter,
			policy, verdict, exit_code, coverage, authority, constructs, position, time_created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`,
		e.ReceiptID, e.SessionID, nullable(e.TurnID), e.CallID, ev.ID, e.Command, e.Interpreter, e.Policy, e.Verdict, code,
		e.Coverage, e.Authority, string(cj), int64(ev.Position), tx.eventTime(ev))
}

// ReceiptSessionQuery finds the session of a verification receipt by id, its one parameter.
const ReceiptSessionQuery = `SELECT session_id FROM verification_receipt WHERE id = ?`
