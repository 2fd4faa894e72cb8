package main

import (
	"context"
	"fmt"
	"io"

	"github.com/zuno-run/zuno/adapters/provider"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/verify"
)

// wireReport is zuno verify's report with --wire: the chain's and read models' verdict, and
// each session's prompt receipts and wire records (docs/storage.md, "`zuno verify`").
type wireReport struct {
	zapp.VerifyReport
	Receipts []queries.SessionAudit `json:"receipts"`
}

// receiptsFailedError is a --wire walk that found an event that does not verify.
type receiptsFailedError struct{ sessions int }

func (e *receiptsFailedError) Error() string {
	return fmt.Sprintf("%s: %d session(s) with a prompt receipt or wire record that does not verify; the log was changed after it was written: see the report above, preserve the log and investigate (zuno debug prompt --session S --step N --wire shows one step)",
		verify.CodeVerifyFailed, e.sessions)
}

// Code returns the stable code.
func (e *receiptsFailedError) Code() string { return verify.CodeVerifyFailed }

// auditReceipts walks the sessions' receipts and wire records (all sessions when session is
// ""), adds them to out and returns a *receiptsFailedError when one did not verify.
func auditReceipts(ctx context.Context, a *app, session string, out *wireReport) error {
	var ids []string
	if session != "" {
		ids = []string{session}
	}
	audits, err := a.Queries.AuditSessions(ctx, ids, provider.NewWireSums().Sum)
	if err != nil {
		return err
	}
	out.Receipts = append([]queries.SessionAudit{}, audits...) // [] rather than null for no session
	failed := 0
	for _, s := range audits {
		if s.Fault != nil {
			failed++
		}
	}
	if failed > 0 {
		out.OK = false
		return &receiptsFailedError{failed}
	}
	return nil
}

func printReceiptAudits(w io.Writer, audits []queries.SessionAudit) {
	for _, s := range audits {
		if f := s.Fault; f != nil {
			fmt.Fprintf(w, "receipts: %s %s at position %d (revision %d, event %s, %s) after %d receipts and %d wire records verified: %s\n",
				s.SessionID, f.Code, f.Position, f.Revision, f.EventID, f.Type, s.Receipts, s.Wire, f.Detail)
			continue
		}
		fmt.Fprintf(w, "receipts: %s verified (%d prompt receipts, %d wire records)\n", s.SessionID, s.Receipts, s.Wire)
	}
}
