package events

// Durable questions (docs/questions.md): the question, question_async and plan_exit tools
// publish a request to the user; answers, deferrals and voids follow. They are recorded in
// the asking session's inbox stream (jobs-<sessionId>), the stream whose inputs reach the
// model: a real answer and the inbox input that carries it to the model are one append, so an
// answer is never recorded without its delivery, nor delivered without being recorded.
const (
	TypeQuestionPublished = "question.published.1"
	TypeQuestionAnswered  = "question.answered.1"
	TypeQuestionDeferred  = "question.deferred.1"
	TypeQuestionVoided    = "question.voided.1"
)

// Question kinds (QuestionPublished.Kind).
const (
	// QuestionKindQuestion is a clarification: items answered with an option or free text.
	QuestionKindQuestion = "question"
	// QuestionKindPlanExit is plan_exit's closed approval request: one item, approve or reject.
	QuestionKindPlanExit = "plan_exit"
)

// Question modes (QuestionPublished.Mode): how the asking call waits.
const (
	// QuestionModeWait: the Plan agent's question; the call waits for the first response, and
	// the request has a native deferral deadline (DeferAt).
	QuestionModeWait = "wait"
	// QuestionModeReceipt: published and answered later; the call returned a receipt at once
	// (question in Work or with an active Goal, question_async, plan_exit).
	QuestionModeReceipt = "receipt"
)

// QuestionOption is one choice an item offers.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// QuestionItem is one question of a request, with its stable id.
type QuestionItem struct {
	ID       string           `json:"id"`
	Question string           `json:"question"`
	Options  []QuestionOption `json:"options,omitempty"`
	// Custom: an answer may be free text, not only one of Options (always true without options).
	Custom bool `json:"custom"`
}

// PlanExitBinding is what a plan_exit approval authorises, exactly: the Plan as shown (its id
// and the session's plan revision) and the identity that would execute it.
type PlanExitBinding struct {
	PlanID       string `json:"planId"`
	PlanRevision uint64 `json:"planRevision"`
	Agent        string `json:"agent"`
	Model        string `json:"model"`
	// TurnID is the source Plan turn: an early approval takes effect only once it finished
	// normally (completed).
	TurnID string `json:"turnId"`
}

// QuestionPublished opens request RequestID at revision 1.
type QuestionPublished struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Revision  uint64 `json:"revision"`
	Kind      string `json:"kind"`
	Mode      string `json:"mode"`
	// Tool and CallID name the call that asked; TurnID its turn; Agent the agent that asked.
	Tool   string         `json:"tool"`
	CallID string         `json:"callId"`
	TurnID string         `json:"turnId,omitempty"`
	Agent  string         `json:"agent,omitempty"`
	Title  string         `json:"title,omitempty"`
	Items  []QuestionItem `json:"items"`
	// DeferAt is the native deferral deadline of a waiting question (RFC 3339, UTC), stored
	// here and never recomputed: a process that waits again after a restart waits for this
	// instant, not for a new full period. Empty for a request that no call waits on.
	DeferAt string `json:"deferAt,omitempty"`
	// CountdownAt is when a face starts showing the countdown (the silent period's end).
	CountdownAt string           `json:"countdownAt,omitempty"`
	PlanExit    *PlanExitBinding `json:"planExit,omitempty"`
}

func (QuestionPublished) EventType() string { return TypeQuestionPublished }

// QuestionItemAnswer is the answer to one item: Selected names options by label, Text is free
// text; a plan_exit item's answer is Selected ["approve"] or ["reject"].
type QuestionItemAnswer struct {
	ItemID   string   `json:"itemId"`
	Selected []string `json:"selected,omitempty"`
	Text     string   `json:"text,omitempty"`
}

// QuestionAnswered records a real answer to some or all of the open items (a partial answer
// keeps what it confirms; the rest stays pending), at the request's new Revision. InputID is
// the inbox input appended with it, which carries the answer to the model once.
type QuestionAnswered struct {
	SessionID string               `json:"sessionId"`
	RequestID string               `json:"requestId"`
	Revision  uint64               `json:"revision"`
	Answers   []QuestionItemAnswer `json:"answers"`
	InputID   string               `json:"inputId"`
	// Complete: every item of the request has an answer now.
	Complete bool `json:"complete"`
	// Source is who answered ("user", a face: "cli", "http", "terminal").
	Source string `json:"source"`
}

func (QuestionAnswered) EventType() string { return TypeQuestionAnswered }

// Deferral reasons.
const (
	// DeferTimeout: the native deadline passed with no response.
	DeferTimeout = "timeout"
	// DeferLater: the user chose "later" (snooze).
	DeferLater = "later"
)

// QuestionDeferred releases the wait on a request without answering it: nothing is selected,
// nothing closed, no model input created; the request stays open and may be answered later.
type QuestionDeferred struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Revision  uint64 `json:"revision"`
	Reason    string `json:"reason"`
	// Deadline is the stored deadline the deferral is for (the published DeferAt), for a
	// timeout; empty for "later".
	Deadline string `json:"deadline,omitempty"`
}

func (QuestionDeferred) EventType() string { return TypeQuestionDeferred }

// QuestionVoided closes a request that can no longer mean what it asked: a plan_exit whose
// Plan, identity or source turn changed. Reason says which.
type QuestionVoided struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Revision  uint64 `json:"revision"`
	Reason    string `json:"reason"`
}

func (QuestionVoided) EventType() string { return TypeQuestionVoided }

// IsQuestionEvent reports whether p is a question event: the job ledger, which shares the
// inbox stream, folds past them.
func IsQuestionEvent(p Payload) bool {
	switch p.(type) {
	case QuestionPublished, QuestionAnswered, QuestionDeferred, QuestionVoided:
		return true
	}
	return false
}
