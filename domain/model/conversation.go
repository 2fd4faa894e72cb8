package model

// Conversation is what a provider keeps of one conversation between its requests: the
// messages it has validated (copied, since a caller may reuse its slice) and their check.
// An agent sends its whole, growing conversation at every step, so a request that continues
// the conversation is validated for its new messages only; checking that it does continue
// compares messages, which costs little per message (Message.Equal). The zero value is
// ready; it is not safe for concurrent use.
type Conversation struct {
	msgs  []Message
	check ConversationCheck
}

// Messages returns the messages validated so far. The caller must not change them.
func (c *Conversation) Messages() []Message { return c.msgs }

// Continues reports whether msgs start with the messages validated so far.
func (c *Conversation) Continues(msgs []Message) bool {
	return len(c.msgs) <= len(msgs) && CommonPrefix(c.msgs, msgs) == len(c.msgs)
}

// Validate is r.ValidateFor(provider), walking only the messages r has beyond those validated
// before when it continues them, and the whole conversation otherwise. On success the
// conversation is r's; on an error it is forgotten.
func (c *Conversation) Validate(provider string, r Request) error {
	if !c.Continues(r.Messages) {
		*c = Conversation{}
	}
	return c.ValidateContinuation(provider, r)
}

// ValidateContinuation is Validate for a request whose messages the caller has just found to
// continue the conversation (Continues), which it does not compare again: a long
// conversation is compared once per request, not twice.
func (c *Conversation) ValidateContinuation(provider string, r Request) error {
	if err := r.ValidateForWith(provider, &c.check); err != nil {
		*c = Conversation{}
		return err
	}
	c.msgs = append(c.msgs, r.Messages[len(c.msgs):]...)
	return nil
}
