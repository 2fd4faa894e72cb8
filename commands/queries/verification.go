package queries

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/verification"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// ReceiptView is zuno debug receipt's answer: a shell call's verification receipt as the
// event log holds it, and where.
type ReceiptView struct {
	EventID  string `json:"eventId"`
	Position uint64 `json:"position"`
	events.VerificationReceipt
}

// VerificationReceipt finds a verification receipt by id: the read model says which session
// holds it, and the receipt is read from that session's stream, the log being the record.
func (q *Queries) VerificationReceipt(ctx context.Context, id string) (ReceiptView, error) {
	if !verification.ValidReceiptID(id) {
		return ReceiptView{}, domain.Invalid("receipt", fmt.Sprintf("%q is not a verification receipt id", id),
			"pass the id a shell result names as [verification rcp_…]: rcp_ and 32 lower-case hex digits")
	}
	t, err := q.SQL(ctx, projections.ReceiptSessionQuery, 1, id)
	if err != nil {
		return ReceiptView{}, err
	}
	if len(t.Rows) == 0 {
		return ReceiptView{}, receiptNotFound(id)
	}
	var v ReceiptView
	sessionID := fmt.Sprint(t.Rows[0][0])
	_, err = commands.Load(ctx, q.log, q.registry, commands.SessionStream(sessionID), 0, func(rec events.Recorded, p events.Payload) error {
		if e, ok := p.(events.VerificationReceipt); ok && e.ReceiptID == id {
			v = ReceiptView{EventID: rec.ID, Position: rec.Position, VerificationReceipt: e}
		}
		return nil
	})
	if err != nil {
		return ReceiptView{}, err
	}
	if v.ReceiptID == "" {
		return ReceiptView{}, receiptNotFound(id)
	}
	return v, nil
}

func receiptNotFound(id string) *NotFoundError {
	return &NotFoundError{fmt.Sprintf("no verification receipt %s is recorded; shell results name theirs as [verification rcp_…], "+
		"and zuno db \"SELECT id, command, authority FROM verification_receipt\" lists them", id)}
}
