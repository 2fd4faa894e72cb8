// Package question is the aggregate of a session's durable questions (docs/questions.md): the
// requests the question, question_async and plan_exit tools publish, and the answers,
// deferrals and voids that follow. Its events share the session's inbox stream
// (jobs-<sessionId>) with the job ledger, so an answer and the inbox input that carries it to
// the model are decided and appended together. A request has a stable id, item ids and a
// revision; every answer names the revision it was made against, and a stale one is refused.
package question

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Stable codes of a refused question command.
const (
	// CodeQuestionNotFound: the session has no request with this id.
	CodeQuestionNotFound = "question_not_found"
	// CodeQuestionClosed: the request is answered in full or voided; nothing more is accepted.
	CodeQuestionClosed = "question_closed"
	// CodeItemNotFound: an answer names an item the request does not have.
	CodeItemNotFound = "question_item_not_found"
	// CodeItemAnswered: an answer names an item that has its answer already (answers are final).
	CodeItemAnswered = "question_item_answered"
	// CodeRequestIDReused: a publication reuses a request id with other content.
	CodeRequestIDReused = "question_request_reused"
	// CodeQuestionToParent: a delegated child's question, handed to its parent as a blocker
	// instead of being put to the user; the tool's result carries this code.
	CodeQuestionToParent = "question_to_parent"
)

// Bounds of a request, so that one call cannot flood a face or a prompt.
const (
	MaxItems        = 8
	MaxOptions      = 10
	MaxQuestionLen  = 2000
	MaxLabelLen     = 200
	MaxAnswerLen    = 8000
	MaxDescriptionN = 500
)

// Plan-exit decisions: the one item of a plan_exit request is answered with exactly one.
const (
	Approve = "approve"
	Reject  = "reject"
)

// PlanExitItem is the id of plan_exit's one item.
const PlanExitItem = "approval"

// Status of a request as a face shows it.
const (
	StatusPending  = "pending"  // no item answered yet
	StatusPartial  = "partial"  // some items answered, the rest pending
	StatusAnswered = "answered" // every item answered
	StatusVoided   = "voided"   // closed unanswered (a plan_exit whose Plan, identity or turn changed)
)

// Request is one published request as the log has made it.
type Request struct {
	events.QuestionPublished
	// Revision is the request's current revision (the published one is 1; each answer,
	// deferral and void adds one).
	Revision uint64
	// Answers are the items answered so far, by item id.
	Answers map[string]events.QuestionItemAnswer
	// Deferred is the reason the wait was last released without an answer ("" when never).
	Deferred string
	// Voided is why the request was voided, "" when it was not.
	Voided string
}

// Status is the request's status (Status* constants).
func (r *Request) Status() string {
	switch {
	case r.Voided != "":
		return StatusVoided
	case len(r.Answers) == len(r.Items):
		return StatusAnswered
	case len(r.Answers) > 0:
		return StatusPartial
	}
	return StatusPending
}

// Open reports whether the request still accepts answers.
func (r *Request) Open() bool { return r.Voided == "" && len(r.Answers) < len(r.Items) }

// Pending is the ids of the items that have no answer yet, in item order.
func (r *Request) Pending() []string {
	var out []string
	for _, it := range r.Items {
		if _, ok := r.Answers[it.ID]; !ok {
			out = append(out, it.ID)
		}
	}
	return out
}

// Decision is a plan_exit request's answer ("" while unanswered).
func (r *Request) Decision() string {
	if a, ok := r.Answers[PlanExitItem]; ok && len(a.Selected) == 1 {
		return a.Selected[0]
	}
	return ""
}

// Book is the questions of one session, folded from its inbox stream.
type Book struct {
	reqs  map[string]*Request
	order []string
}

// Get returns the request with id, nil when there is none.
func (b *Book) Get(id string) *Request { return b.reqs[id] }

// Requests returns the requests in publication order; read them, never change them.
func (b *Book) Requests() []*Request {
	out := make([]*Request, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, b.reqs[id])
	}
	return out
}

// Evolve folds one event of the inbox stream; the stream's job and inbox events are not the
// book's and are passed over.
func (b *Book) Evolve(p events.Payload) error {
	if b.reqs == nil {
		b.reqs = map[string]*Request{}
	}
	switch e := p.(type) {
	case events.QuestionPublished:
		b.reqs[e.RequestID] = &Request{QuestionPublished: e, Revision: e.Revision, Answers: map[string]events.QuestionItemAnswer{}}
		b.order = append(b.order, e.RequestID)
	case events.QuestionAnswered:
		r, err := b.known(e.RequestID)
		if err != nil {
			return err
		}
		for _, a := range e.Answers {
			r.Answers[a.ItemID] = a
		}
		r.Revision = e.Revision
	case events.QuestionDeferred:
		r, err := b.known(e.RequestID)
		if err != nil {
			return err
		}
		r.Deferred, r.Revision = e.Reason, e.Revision
	case events.QuestionVoided:
		r, err := b.known(e.RequestID)
		if err != nil {
			return err
		}
		r.Voided, r.Revision = e.Reason, e.Revision
	}
	return nil
}

func (b *Book) known(id string) (*Request, error) {
	r := b.reqs[id]
	if r == nil {
		return nil, fmt.Errorf("question book: event for unknown request %s", id)
	}
	return r, nil
}

// Publish is the command that opens a request.
type Publish struct {
	events.QuestionPublished
}

// DecidePublish opens the request at revision 1. The same publication again (a call executed
// again) records nothing; the id reused for other content is refused.
func DecidePublish(b *Book, c Publish) ([]events.Payload, error) {
	p := c.QuestionPublished
	p.Revision = 1
	if err := CheckItems(p.Kind, p.Items); err != nil {
		return nil, err
	}
	if p.SessionID == "" || p.RequestID == "" {
		return nil, domain.Invalid("requestId", "a request needs its session and id", "publish through the question port")
	}
	if prev := b.Get(p.RequestID); prev != nil {
		if same(prev.QuestionPublished, p) {
			return nil, nil
		}
		e := domain.NewError(CodeRequestIDReused, fmt.Sprintf("request %s was published with other content", p.RequestID),
			"publish a new request (a new tool call)")
		e.ID = p.RequestID
		return nil, e
	}
	return []events.Payload{p}, nil
}

// same compares two publications by what they ask; the deadlines, which a retry computes
// anew, are the first's.
func same(a, b events.QuestionPublished) bool {
	a.DeferAt, a.CountdownAt, b.DeferAt, b.CountdownAt = "", "", "", ""
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// CheckItems checks a request's items: 1 to MaxItems, unique non-empty ids, a question each,
// unique option labels. A plan_exit request has exactly its one approval item.
func CheckItems(kind string, items []events.QuestionItem) error {
	if kind == events.QuestionKindPlanExit {
		if len(items) != 1 || items[0].ID != PlanExitItem {
			return domain.Invalid("items", "a plan_exit request has exactly its approval item", "publish through plan_exit")
		}
	}
	if len(items) == 0 || len(items) > MaxItems {
		return domain.Invalid("questions", fmt.Sprintf("has %d questions", len(items)),
			fmt.Sprintf("ask 1 to %d questions in one request", MaxItems))
	}
	ids := map[string]bool{}
	for i, it := range items {
		field := fmt.Sprintf("questions[%d]", i)
		switch {
		case it.ID == "" || len(it.ID) > 64:
			return domain.Invalid(field+".id", "is empty or longer than 64 characters", "give each question a short id")
		case ids[it.ID]:
			return domain.Invalid(field+".id", fmt.Sprintf("%q is used twice", it.ID), "give each question its own id")
		case strings.TrimSpace(it.Question) == "" || len(it.Question) > MaxQuestionLen:
			return domain.Invalid(field+".question", "is empty or too long",
				fmt.Sprintf("ask in 1 to %d characters", MaxQuestionLen))
		case len(it.Options) > MaxOptions:
			return domain.Invalid(field+".options", fmt.Sprintf("has %d options", len(it.Options)),
				fmt.Sprintf("offer at most %d options", MaxOptions))
		case len(it.Options) == 0 && !it.Custom:
			return domain.Invalid(field+".options", "offers no option and no free text", "offer options, or allow a free-text answer")
		}
		ids[it.ID] = true
		labels := map[string]bool{}
		for j, o := range it.Options {
			if strings.TrimSpace(o.Label) == "" || len(o.Label) > MaxLabelLen || labels[o.Label] || len(o.Description) > MaxDescriptionN {
				return domain.Invalid(fmt.Sprintf("%s.options[%d]", field, j), "is empty, too long or repeated",
					fmt.Sprintf("give each option its own label of 1 to %d characters", MaxLabelLen))
			}
			labels[o.Label] = true
		}
	}
	return nil
}

// Answer is the command that answers some or all of a request's open items.
type Answer struct {
	SessionID        string                      `json:"sessionId"`
	RequestID        string                      `json:"requestId"`
	ExpectedRevision uint64                      `json:"expectedRevision"`
	Answers          []events.QuestionItemAnswer `json:"answers"`
	Source           string                      `json:"source"`
	// InputID is the inbox input the answer is admitted as (derived from the command).
	InputID string `json:"inputId"`
}

// DecideAnswer records a real answer and admits the inbox input that carries it to the
// model, in one decision: a partial answer keeps what it confirms and leaves the other items
// pending. An answer made against another revision is refused (stale_revision): the request
// changed (answered in part, deferred, voided) since the face showed it.
func DecideAnswer(b *Book, c Answer) ([]events.Payload, error) {
	r, err := open(b, c.RequestID, c.ExpectedRevision)
	if err != nil {
		return nil, err
	}
	if len(c.Answers) == 0 {
		return nil, domain.Invalid("answers", "is empty", "answer at least one question; skipping is not an answer (use later)")
	}
	seen := map[string]bool{}
	for i, a := range c.Answers {
		if err := checkAnswer(r, a, seen, fmt.Sprintf("answers[%d]", i)); err != nil {
			return nil, err
		}
	}
	source := c.Source
	if source == "" {
		source = "user"
	}
	complete := len(r.Answers)+len(c.Answers) == len(r.Items)
	rev := r.Revision + 1
	text := Render(r, c.Answers, complete)
	return []events.Payload{
		events.QuestionAnswered{SessionID: c.SessionID, RequestID: r.RequestID, Revision: rev, Answers: c.Answers,
			InputID: c.InputID, Complete: complete, Source: source},
		events.InboxMessageAdmitted{SessionID: c.SessionID, InputID: c.InputID, Text: text, QuestionRequestID: r.RequestID},
	}, nil
}

func checkAnswer(r *Request, a events.QuestionItemAnswer, seen map[string]bool, field string) error {
	it := item(r, a.ItemID)
	switch {
	case it == nil:
		e := domain.NewError(CodeItemNotFound, fmt.Sprintf("request %s has no question %q", r.RequestID, a.ItemID),
			"answer the questions the request lists, by id")
		e.Field, e.ID, e.Valid = field+".itemId", a.ItemID, itemIDs(r)
		return e
	case seen[a.ItemID]:
		return domain.Invalid(field+".itemId", fmt.Sprintf("%q is answered twice in one answer", a.ItemID), "answer each question once")
	}
	seen[a.ItemID] = true
	if _, done := r.Answers[a.ItemID]; done {
		e := domain.NewError(CodeItemAnswered, fmt.Sprintf("question %q of request %s has its answer already", a.ItemID, r.RequestID),
			"answers are final; answer only the pending questions")
		e.Field, e.ID, e.Valid = field+".itemId", a.ItemID, r.Pending()
		return e
	}
	if r.Kind == events.QuestionKindPlanExit {
		if len(a.Selected) != 1 || (a.Selected[0] != Approve && a.Selected[0] != Reject) || a.Text != "" {
			e := domain.Invalid(field+".selected", "a plan approval is exactly approve or reject", "select approve or reject")
			e.Valid = []string{Approve, Reject}
			return e
		}
		return nil
	}
	if len(a.Selected) == 0 && strings.TrimSpace(a.Text) == "" {
		return domain.Invalid(field, "selects nothing and says nothing", "select an option or write an answer; to skip, leave the question out")
	}
	if len(a.Text) > MaxAnswerLen {
		return domain.Invalid(field+".text", "is too long", fmt.Sprintf("answer in at most %d characters", MaxAnswerLen))
	}
	if a.Text != "" && !it.Custom {
		return domain.Invalid(field+".text", "this question takes one of its options only", "select an option")
	}
	labels := make([]string, len(it.Options))
	for i, o := range it.Options {
		labels[i] = o.Label
	}
	for _, s := range a.Selected {
		if !slices.Contains(labels, s) {
			e := domain.Invalid(field+".selected", fmt.Sprintf("%q is not an option of %q", s, it.ID), "select one of the options")
			e.Valid = labels
			return e
		}
	}
	return nil
}

func item(r *Request, id string) *events.QuestionItem {
	for i := range r.Items {
		if r.Items[i].ID == id {
			return &r.Items[i]
		}
	}
	return nil
}

func itemIDs(r *Request) []string {
	var out []string
	for _, it := range r.Items {
		out = append(out, it.ID)
	}
	return out
}

// open returns the request if it exists, still accepts responses and is at revision expected.
func open(b *Book, id string, expected uint64) (*Request, error) {
	r := b.Get(id)
	if r == nil {
		e := domain.NewError(CodeQuestionNotFound, fmt.Sprintf("the session has no question request %s", id),
			"list the session's questions (zuno question list) and answer one of them")
		e.ID = id
		return nil, e
	}
	if !r.Open() {
		e := domain.NewError(CodeQuestionClosed, fmt.Sprintf("request %s is %s", id, r.Status()),
			"nothing more is accepted; list the questions to see what is still open")
		e.ID = id
		return nil, e
	}
	if expected != r.Revision {
		e := domain.StaleRevision("question request "+id, expected, r.Revision, "zuno question list")
		e.Field, e.ID = "expectedRevision", id
		return nil, e
	}
	return r, nil
}

// Defer is the command that releases the wait on a request without answering it.
type Defer struct {
	SessionID        string `json:"sessionId"`
	RequestID        string `json:"requestId"`
	ExpectedRevision uint64 `json:"expectedRevision"`
	Reason           string `json:"reason"`
}

// DecideDefer records the deferral: it answers nothing, selects nothing, closes nothing and
// creates no model input. A timeout names the stored deadline it is for, never a new one.
func DecideDefer(b *Book, c Defer) ([]events.Payload, error) {
	r, err := open(b, c.RequestID, c.ExpectedRevision)
	if err != nil {
		return nil, err
	}
	d := events.QuestionDeferred{SessionID: c.SessionID, RequestID: r.RequestID, Revision: r.Revision + 1, Reason: c.Reason}
	switch c.Reason {
	case events.DeferLater:
	case events.DeferTimeout:
		if r.DeferAt == "" {
			return nil, domain.Invalid("reason", "the request has no deadline", "only a waiting question times out")
		}
		d.Deadline = r.DeferAt
	default:
		return nil, domain.Invalid("reason", fmt.Sprintf("%q is not a deferral", c.Reason), "defer with later")
	}
	return []events.Payload{d}, nil
}

// Void is the command that closes a request unanswered.
type Void struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Reason    string `json:"reason"`
}

// DecideVoid voids an open request; a closed one stays as it is (nothing to void).
func DecideVoid(b *Book, c Void) ([]events.Payload, error) {
	r := b.Get(c.RequestID)
	if r == nil || r.Voided != "" {
		return nil, nil
	}
	return []events.Payload{events.QuestionVoided{SessionID: c.SessionID, RequestID: r.RequestID, Revision: r.Revision + 1,
		Reason: c.Reason}}, nil
}

// Render is the answer as the model reads it in its inbox input: the user's words, each under
// the question it answers, and what is still pending.
func Render(r *Request, answers []events.QuestionItemAnswer, complete bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Answer to question request %s", r.RequestID)
	if r.Title != "" {
		fmt.Fprintf(&b, " (%q)", r.Title)
	}
	b.WriteString(":\n")
	for _, a := range answers {
		it := item(r, a.ItemID)
		fmt.Fprintf(&b, "\n[%s] %s\n", a.ItemID, it.Question)
		if len(a.Selected) > 0 {
			fmt.Fprintf(&b, "Selected: %s\n", strings.Join(a.Selected, ", "))
		}
		if a.Text != "" {
			fmt.Fprintf(&b, "Answer: %s\n", a.Text)
		}
	}
	if !complete {
		var pending []string
		for _, id := range r.Pending() {
			if !slices.ContainsFunc(answers, func(a events.QuestionItemAnswer) bool { return a.ItemID == id }) {
				pending = append(pending, id)
			}
		}
		fmt.Fprintf(&b, "\nStill unanswered: %s. Do not ask them again; go on from what you know and state your assumptions.\n",
			strings.Join(pending, ", "))
	}
	return b.String()
}

// Outcomes of an Ask (Receipt.Outcome).
const (
	// AskPublished: the request was published and the call returned at once.
	AskPublished = "published"
	// AskAnswered: the call waited and the first response was an answer; the answer itself
	// reaches the model through the inbox, never in the call's result.
	AskAnswered = "answered"
	// AskDeferred: the call waited and the wait was released unanswered (later, or the
	// deadline); the request stays open.
	AskDeferred = "deferred"
	// AskVoided: the request was closed while the call waited.
	AskVoided = "voided"
	// AskParent: a delegated child's question, handed to its parent as a blocker.
	AskParent = "parent"
)

// Ask is what a question tool asks: Tool is question, question_async or plan_exit.
type Ask struct {
	Tool  string
	Title string
	Items []events.QuestionItem
}

// Receipt is what an Ask returns to the tool.
type Receipt struct {
	RequestID string   `json:"requestId"`
	Revision  uint64   `json:"revision"`
	Outcome   string   `json:"outcome"`
	Status    string   `json:"status"`
	Items     []string `json:"items"`
	Pending   []string `json:"pending,omitempty"`
	// DeferAt is the stored deferral deadline of a waiting question.
	DeferAt string `json:"deferAt,omitempty"`
	// Blocker is the child's question as its parent reads it (AskParent only).
	Blocker string `json:"blocker,omitempty"`
	// PlanExit is what a plan_exit request binds.
	PlanExit *events.PlanExitBinding `json:"planExit,omitempty"`
}
