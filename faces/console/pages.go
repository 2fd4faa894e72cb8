package console

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// promptView is the receipt page: debug prompt's view (redacted unless asked) and the error
// of a receipt that does not verify.
type promptView struct {
	queries.PromptView
	Mismatch string
	Shown    bool
	Prev     int
}

// prompt is GET /console/sessions/{sessionId}/prompt?step=N[&show=content]: a step's prompt
// receipt as `zuno debug prompt` shows it, from the same query: section content and the
// system and developer messages are redacted unless show=content (prompt.NewDebugView).
func (c *Console) prompt(w http.ResponseWriter, r *http.Request) error {
	step := 0
	if v := r.URL.Query().Get("step"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return &pageError{status: http.StatusBadRequest, code: "bad_request", message: fmt.Sprintf("step %q is not a step number", v)}
		}
		step = n
	}
	show := r.URL.Query().Get("show") == "content"
	sid := r.PathValue("sessionId")
	pv, err := c.app.Queries.Prompt(r.Context(), sid, step, show)
	if err != nil && pv.ReceiptID == "" {
		return err
	}
	v := promptView{PromptView: pv, Shown: show, Prev: pv.Step - 1}
	if err != nil { // shown with its mismatch, as debug prompt shows it
		v.Mismatch = err.Error()
	}
	c.render(w, http.StatusOK, "prompt", page{Title: "Prompt receipt " + pv.ReceiptID, Session: sid, Data: v})
	return nil
}

// receipt is GET /console/receipts/{receiptId}: a shell call's verification receipt
// (`zuno debug receipt`).
func (c *Console) receipt(w http.ResponseWriter, r *http.Request) error {
	v, err := c.app.Queries.VerificationReceipt(r.Context(), r.PathValue("receiptId"))
	if err != nil {
		return err
	}
	c.render(w, http.StatusOK, "receipt", page{Title: "Verification receipt " + v.ReceiptID, Session: v.SessionID, Data: v})
	return nil
}

// workView is the session's Plan, Todos and Goal, each as its tool reads it. A plan or todo
// list of a shape this page does not know is shown as its JSON.
type workView struct {
	Plan  *work.PlanView
	Todos *work.TodoView
	Goal  *goal.View
	Other string
}

// work is GET /console/sessions/{sessionId}/work: plan_get, todo_get and goal_get's answers,
// folded from the log.
func (c *Console) work(w http.ResponseWriter, r *http.Request) error {
	ctx, sid := r.Context(), r.PathValue("sessionId")
	plan, err := c.app.Queries.Plan(ctx, sid)
	if err != nil {
		return err
	}
	todos, err := c.app.Queries.Todos(ctx, sid)
	if err != nil {
		return err
	}
	g, err := c.app.Queries.Goal(ctx, sid)
	if err != nil {
		return err
	}
	v := workView{Goal: g}
	switch p := plan.(type) {
	case *work.PlanView:
		v.Plan = p
	case nil:
	default:
		v.Other += indent(p)
	}
	switch td := todos.(type) {
	case work.TodoView:
		v.Todos = &td
	default:
		v.Other += indent(td)
	}
	c.render(w, http.StatusOK, "work", page{Title: "Plan, Todos and Goal", Session: sid, Data: v})
	return nil
}

// indent is a tool's JSON answer as the model reads it, indented ("" for none).
func indent(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil || string(b) == "null" {
		return ""
	}
	return string(b)
}

// verifyView is the verify page: the report, and its first bad event.
type verifyView struct {
	Report app.VerifyReport
	First  *events.ChainFault
}

// verify is GET /console/sessions/{sessionId}/verify: `zuno verify --session` (without an
// anchor, so nothing is written) and the first bad event, the fault at the lowest position.
func (c *Console) verify(w http.ResponseWriter, r *http.Request) error {
	sid := r.PathValue("sessionId")
	rep, err := c.app.Commands.Verify(r.Context(), app.VerifyRequest{Session: sid})
	if err != nil && (rep.OK || app.CodeOf(err) != "verify_failed") {
		return err
	}
	v := verifyView{Report: rep}
	if len(rep.Faults) > 0 {
		first := slices.MinFunc(rep.Faults, func(a, b events.ChainFault) int { return cmp.Compare(a.Position, b.Position) })
		v.First = &first
	}
	c.render(w, http.StatusOK, "verify", page{Title: "Verify " + sid, Session: sid, Data: v})
	return nil
}
