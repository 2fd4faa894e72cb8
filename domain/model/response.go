package model

// Response is a streamed response collected into one value.
type Response struct {
	ID        string      `json:"id,omitempty"`
	Model     string      `json:"model,omitempty"`
	Text      string      `json:"text,omitempty"`
	ToolCalls []ToolCall  `json:"toolCalls,omitempty"`
	Reasoning []Reasoning `json:"reasoning,omitempty"`
	// Refusal is the part of Text the model gave as a refusal.
	Refusal string `json:"refusal,omitempty"`
	Usage   Usage  `json:"usage"`
	// FinishReason is empty while the response is incomplete, and stays empty in the partial
	// response that comes with a stream error.
	FinishReason         FinishReason `json:"finishReason,omitempty"`
	ProviderFinishReason string       `json:"providerFinishReason,omitempty"`
}

// Accumulator builds a Response from events. It exists apart from Collect so a turn driver
// can record each event as it arrives and still get the collected response at the end.
// The zero value is ready to use.
type Accumulator struct {
	resp  Response
	text  []byte
	index map[string]int // tool call id -> position in resp.ToolCalls
	args  [][]byte
	ended []bool
}

// Add applies one event. It tolerates a ToolCallEnd or delta without a ToolCallStart, so a
// terse provider stream still collects into its calls.
func (a *Accumulator) Add(ev Event) {
	switch e := ev.(type) {
	case ResponseStart:
		a.resp.ID, a.resp.Model = e.ID, e.Model
	case TextDelta:
		a.text = append(a.text, e.Text...)
		if e.Refusal {
			a.resp.Refusal += e.Text
		}
	case ToolCallStart:
		i := a.call(e.ID)
		if e.ProviderID != "" {
			a.resp.ToolCalls[i].ProviderID = e.ProviderID
		}
		if e.Name != "" {
			a.resp.ToolCalls[i].Name = e.Name
		}
	case ToolCallArgsDelta:
		i := a.call(e.ID)
		a.args[i] = append(a.args[i], e.Delta...)
	case ToolCallEnd:
		i := a.call(e.ID)
		if e.ProviderID != "" {
			a.resp.ToolCalls[i].ProviderID = e.ProviderID
		}
		if e.Name != "" {
			a.resp.ToolCalls[i].Name = e.Name
		}
		// The end event's arguments are authoritative: a provider may repair or complete
		// what the deltas carried.
		a.args[i] = append(a.args[i][:0], e.Arguments...)
		a.ended[i] = true
	case ReasoningItem:
		a.resp.Reasoning = append(a.resp.Reasoning, e.Reasoning)
	case UsageReport:
		a.resp.Usage = e.Usage
	case Finish:
		a.resp.FinishReason, a.resp.ProviderFinishReason = e.Reason, e.ProviderReason
	}
}

func (a *Accumulator) call(id string) int {
	if i, ok := a.index[id]; ok {
		return i
	}
	if a.index == nil {
		a.index = map[string]int{}
	}
	a.index[id] = len(a.resp.ToolCalls)
	a.resp.ToolCalls = append(a.resp.ToolCalls, ToolCall{ID: id})
	a.args = append(a.args, nil)
	a.ended = append(a.ended, false)
	return a.index[id]
}

// Response returns what has been collected so far. After an error it is the partial output,
// which the transcript may still need to record; only ended tool calls are included, since a
// call whose arguments were cut off must never be executed.
func (a *Accumulator) Response() Response {
	r := a.resp
	r.Text = string(a.text)
	r.ToolCalls = nil
	for i, c := range a.resp.ToolCalls {
		if !a.ended[i] && r.FinishReason == "" {
			continue
		}
		c.Arguments = string(a.args[i])
		r.ToolCalls = append(r.ToolCalls, c)
	}
	return r
}

// Collect ranges over a stream and returns the collected response. On error it returns the
// partial response with the error.
func Collect(s Stream) (Response, error) {
	var a Accumulator
	for ev, err := range s {
		if err != nil {
			return a.Response(), err
		}
		a.Add(ev)
	}
	return a.Response(), nil
}
