package prompt

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// SchemaVersion is the receipt layout this package writes and verifies.
const SchemaVersion = 1

// Receipt is the forensic record of an assembled prompt, in the shape the event log stores
// (events.PromptReceipt, carried by session.prompt.assembled.1).
type Receipt = events.PromptReceipt

// Input is everything one provider step's prompt is assembled from. The caller has read the
// files, the configuration and the durable state; nothing here is read again.
type Input struct {
	Model string
	// ContextWindow is the model's input limit in tokens, 0 when unknown; only a known limit
	// lets assembly refuse an over-long prompt (model.ModelInfo.ContextWindow).
	ContextWindow int64
	MaxTokens     int
	ToolChoice    model.ToolChoice

	Agent AgentPrompt
	// Mode is ModeNone, ModePlan or ModeWork.
	Mode    string
	Runtime RuntimeState
	// GlobalAgents is the user's global AGENTS.md, nil when there is none.
	GlobalAgents *InstructionFile
	// ProjectAgents are the AGENTS.md files of the project root and the directories between
	// it and the working directory, in any order: they are ordered shallowest first, so the
	// nearest file is read last and wins.
	ProjectAgents []InstructionFile
	WorkState     *WorkState
	// Skills fills the Skill lanes (docs/skills.md); nil adds none.
	Skills *SkillsPrompt
	// Memory is the project memory's content (docs/memory.md); nil adds none.
	Memory *MemoryPrompt

	// Conversation is the transcript after the compaction boundary, ending with the input of
	// this step.
	Conversation []model.Message
	// Tools is the final tool set.
	Tools []ToolDecl
	// History, when set, caches the conversation's encoding across the steps of a session.
	// The receipt is the same with or without it, except that its Blobs then leave out the
	// conversation content an earlier Assemble with this History already returned: a caller
	// that records every receipt holds those (see Expand), and a long session does not copy
	// its whole history into a map at every step.
	History *History
}

// AgentPrompt is the agent's role prompt.
type AgentPrompt struct {
	Name string
	// Source is where the agent is defined: "builtin:<name>" or a configuration file path.
	Source string
	// Trust is TrustHost for a built-in agent, TrustUser or TrustProject for a configured one.
	Trust string
	Text  string
}

// InstructionFile is an AGENTS.md file as read from disk.
type InstructionFile struct {
	Path    string
	Content []byte
}

// ToolDecl is a tool the model will be offered.
type ToolDecl struct {
	model.Tool
	// WritesWorkspace marks a real edit or write capability: an editing tool, or a shell whose
	// sandbox lets it write the workspace. It decides whether runtime.editing is shown.
	WritesWorkspace bool
}

// Assembled is a prompt ready to send: its sections, the request, and the receipt to append
// before sending it.
type Assembled struct {
	Sections []Section
	Request  model.Request
	Receipt  Receipt
}

// Assemble builds the prompt of one provider step. It fails, before anything could be sent,
// with a *domain.Error for invalid input or an over-budget work state; with a *model.Error
// for a conversation or tool set no provider accepts; and with a *ContextOverflowError when
// the whole input exceeds a known window.
func Assemble(in Input) (Assembled, error) {
	// The request carries each message as its recorded blob decodes, so what is sent is
	// exactly what the receipt can rebuild (JSON, for one, replaces invalid UTF-8).
	history := in.History
	if history == nil {
		history = &History{}
	}
	history.prepare(in.Conversation)
	tools, err := checkTools(in, &history.check)
	if err != nil {
		return Assembled{}, err
	}
	workState, wsReport, err := RenderWorkState(in.WorkState)
	if err != nil {
		return Assembled{}, err
	}
	sections, err := buildSections(in, tools, workState)
	if err != nil {
		return Assembled{}, err
	}

	blobs := make(map[string]string, len(sections)+len(tools)+8)
	secParts, secMsgs, secWire, err := encodeSections(sections, blobs)
	if err != nil {
		return Assembled{}, err
	}
	conv, err := history.encode(in.Conversation)
	if err != nil {
		return Assembled{}, err
	}
	for i := history.returned; i < len(conv); i++ {
		blobs[conv[i].part.SHA256] = string(conv[i].blob)
	}
	parts, msgs, wire := history.lists(secParts, secMsgs, secWire, conv)
	var req model.Request
	req.Messages = msgs
	toolParts, wireTools, err := history.encodeTools(tools, blobs)
	if err != nil {
		return Assembled{}, err
	}
	req.Tools = wireTools
	// The conversation, tools and options were validated by checkTools, and every section is
	// a non-empty system or developer message, so the request needs no second pass (which
	// would cost a walk of the whole conversation at every step).
	req.Model, req.MaxTokens, req.ToolChoice = in.Model, in.MaxTokens, in.ToolChoice

	r := Receipt{
		SchemaVersion:  SchemaVersion,
		Estimator:      Estimator,
		Model:          in.Model,
		ContextWindow:  in.ContextWindow,
		MaxTokens:      in.MaxTokens,
		Sections:       make([]events.PromptSection, len(sections)),
		Messages:       parts,
		Tools:          toolParts,
		ToolChoiceMode: string(in.ToolChoice.Mode),
		ToolChoiceName: in.ToolChoice.Name,
		// Hooks stays empty: no request hooks run yet. The field is kept because it is part
		// of the recorded receipt (session.prompt.assembled.1).
		Blobs: blobs,
	}
	for i, s := range sections {
		r.Sections[i] = s.PromptSection
	}
	if workState != "" {
		r.WorkState = &wsReport
	}
	r.ConversationDigest = chainAt(conv, len(conv))
	r.EstimatedInputTokens = estimateInput(r)
	if in.ContextWindow > 0 && r.EstimatedInputTokens > in.ContextWindow {
		return Assembled{}, overflow(r)
	}
	if r.AssemblyDigest, err = AssemblyDigest(r); err != nil {
		return Assembled{}, err
	}
	if r.ActualDigest, err = requestDigest(req, wire, len(sections), in.History); err != nil {
		return Assembled{}, err
	}
	history.returned = len(conv)
	return Assembled{Sections: sections, Request: req, Receipt: r}, nil
}

// encodeSections numbers and measures each section, records its content as a blob, and
// returns its receipt part, its message and that message's exact JSON (for the actual
// digest).
func encodeSections(sections []Section, blobs map[string]string) ([]events.PromptPart, []model.Message, [][]byte, error) {
	parts := make([]events.PromptPart, len(sections))
	msgs := make([]model.Message, len(sections))
	wire := make([][]byte, len(sections))
	for i := range sections {
		s := &sections[i]
		s.Order = i
		s.Bytes = len(s.Content)
		s.EstimatedTokens = EstimateTokens(s.Content)
		s.SHA256 = digestString(s.Content)
		blobs[s.SHA256] = s.Content
		parts[i] = events.PromptPart{Kind: PartSection, Section: s.ID, Role: s.Role,
			Bytes: s.Bytes, EstimatedTokens: s.EstimatedTokens, SHA256: s.SHA256}
		msgs[i] = model.Message{Role: model.Role(s.Role), Text: s.Content}
		b, err := json.Marshal(msgs[i])
		if err != nil {
			return nil, nil, nil, err
		}
		wire[i] = b
	}
	return parts, msgs, wire, nil
}

// encodeTools records each tool declaration as a blob, as it reads back from its JSON, and
// returns its receipt part and the declaration the request carries. The tools are the same
// at almost every step, so the History keeps the last list's encoding and hands it out again
// while the declarations are unchanged.
func (h *History) encodeTools(tools []ToolDecl, blobs map[string]string) ([]events.PromptPart, []model.Tool, error) {
	c := &h.tools
	if !c.holds(tools) {
		*c = encodedTools{}
		for _, t := range tools {
			blob, back, err := roundTrip(t.Tool)
			if err != nil {
				return nil, nil, err
			}
			d := digest(blob)
			c.blobs = append(c.blobs, string(blob))
			c.parts = append(c.parts, events.PromptPart{Kind: PartTool, Name: back.Name,
				Bytes: len(blob), EstimatedTokens: toolTokens(back), SHA256: d})
			c.out = append(c.out, back)
			c.given = append(c.given, model.Tool{Name: t.Name, Description: t.Description, Schema: slices.Clone(t.Schema)})
		}
	}
	for i, p := range c.parts {
		blobs[p.SHA256] = c.blobs[i]
	}
	return slices.Clone(c.parts), slices.Clone(c.out), nil
}

// encodedTools is the encoding of the tool list a History last saw.
type encodedTools struct {
	given []model.Tool // a copy of the declarations encoded
	blobs []string
	parts []events.PromptPart
	out   []model.Tool
}

// holds reports whether tools are the declarations encoded, field for field.
func (c *encodedTools) holds(tools []ToolDecl) bool {
	return c.given != nil && slices.EqualFunc(c.given, tools, func(a model.Tool, b ToolDecl) bool {
		return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Schema, b.Schema)
	})
}

// requestDigest is digest(RequestBytes(req)) computed from the messages' already encoded JSON,
// so a long conversation is not re-encoded at every step. encoding/json writes a slice
// element exactly as it writes the element alone, so splicing the encoded messages into the
// encoding of the rest of the request gives the same bytes (a test holds it to that).
//
// With a History, the SHA-256 state after the last step's messages is kept, and when the
// request starts with the same bytes (model and sections) hashing resumes there: the digest
// still covers every byte sent, but a step only hashes what is new.
func requestDigest(req model.Request, wire [][]byte, sections int, h *History) (string, error) {
	l, err := newRequestLayout(req, wire, sections)
	if err != nil {
		return "", err
	}
	return l.digest(req, wire, sections, h)
}

// requestLayout is what requestDigest splices the encoded messages into: the request's
// encoding without its messages, split where they go, and a key of the bytes before the
// conversation (model and sections) that a History's saved state must have hashed. It
// depends on the request's model, tools, tool choice and output bound and on its sections,
// not on its conversation, so a caller whose steps share those keeps it (the Auditor).
type requestLayout struct {
	head, tail []byte // `{"model":…,"messages":` and what follows the messages
	prefix     string
	whole      bool // the encoding is not the layout this splice knows: encode it whole
}

func newRequestLayout(req model.Request, wire [][]byte, sections int) (requestLayout, error) {
	rest := req
	rest.Messages = nil
	body, err := json.Marshal(rest)
	if err != nil {
		return requestLayout{}, err
	}
	name, err := json.Marshal(req.Model)
	if err != nil {
		return requestLayout{}, err
	}
	head := append(append([]byte(`{"model":`), name...), `,"messages":`...)
	if !bytes.HasPrefix(body, append(head, "null"...)) {
		return requestLayout{whole: true}, nil
	}
	key := sha256.New()
	key.Write(head)
	for _, w := range wire[:sections] {
		key.Write(w)
		key.Write([]byte{0})
	}
	return requestLayout{head: head, tail: body[len(head)+len("null"):], prefix: hex.EncodeToString(key.Sum(nil))}, nil
}

// digest is requestDigest of req, whose messages are encoded in wire, laid out as l.
func (l requestLayout) digest(req model.Request, wire [][]byte, sections int, h *History) (string, error) {
	if l.whole {
		full, err := RequestBytes(req)
		if err != nil {
			return "", err
		}
		return digest(full), nil
	}
	st := sha256.New()
	from := 0
	if h != nil && h.sumPrefix == l.prefix && h.sumParts > 0 && h.sumParts <= len(wire)-sections {
		if err := st.(encoding.BinaryUnmarshaler).UnmarshalBinary(h.sumState); err == nil {
			from = h.sumParts
		} else {
			st.Reset()
		}
	}
	if from == 0 {
		st.Write(l.head)
		st.Write([]byte{'['})
		for i, w := range wire[:sections] {
			if i > 0 {
				st.Write([]byte{','})
			}
			st.Write(w)
		}
	}
	for i := sections + from; i < len(wire); i++ {
		if i > 0 {
			st.Write([]byte{','})
		}
		st.Write(wire[i])
	}
	if h != nil {
		if state, err := st.(encoding.BinaryMarshaler).MarshalBinary(); err == nil {
			h.sumPrefix, h.sumParts, h.sumState = l.prefix, len(wire)-sections, state
		}
	}
	st.Write([]byte{']'})
	st.Write(l.tail)
	return hex.EncodeToString(st.Sum(nil)), nil
}

// Part kinds of the projection.
const (
	PartSection = "section"
	PartMessage = "message"
	PartTool    = "tool"
)

// RequestBytes is the exact byte form of a provider-visible request that ActualDigest covers:
// its encoding/json encoding, which is deterministic for model.Request. Each provider
// adapter's wire format is a function of this request, so proving it proves what was sent.
func RequestBytes(req model.Request) ([]byte, error) { return json.Marshal(req) }

// AssemblyDigest digests the receipt's ordered metadata (everything but the blobs and the two
// digests). The section digests inside it bind the contents, so it changes when any section,
// its place, its provenance or its size changes.
//
// The conversation enters through ConversationDigest, which chains its parts, rather than as
// the list itself: the digest then costs the same at step 1,000 as at step 10, and it does
// not depend on whether the receipt is stored whole or relative to an earlier one.
func AssemblyDigest(r Receipt) (string, error) {
	b, err := assemblyJSON(r)
	if err != nil {
		return "", err
	}
	return digest(append([]byte(assemblyPrefix), b...)), nil
}

const assemblyPrefix = "zuno.prompt.assembly.1\n"

// assemblyJSON is the ReceiptJSON the assembly digest covers (docs/formats/receipts.md §8).
func assemblyJSON(r Receipt) ([]byte, error) {
	r.AssemblyDigest, r.ActualDigest, r.Blobs, r.ConversationBase, r.HeaderBase, r.LoggedParts = "", "", nil, nil, nil, 0
	r.Resume = nil // a checkpoint, not part of the assembly (docs/formats/receipts.md §13)
	r.Messages = r.Messages[:min(len(r.Messages), len(r.Sections))]
	return json.Marshal(r)
}

// roundTrip returns the canonical blob of v and the value it decodes to. One pass is not
// canonical: the encoder writes an invalid UTF-8 byte as the escape \ufffd, but the decoded
// U+FFFD as itself, so the second encoding is the fixed point Verify can re-derive.
func roundTrip[T any](v T) ([]byte, T, error) {
	var back T
	blob, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(blob, &back)
	}
	if err == nil {
		blob, err = json.Marshal(back)
	}
	return blob, back, err
}

// messageTokens estimates the fields a provider turns into tokens, not the JSON around them,
// whose escaping would double-count tool call arguments.
func messageTokens(m model.Message) int {
	n := EstimateTokens(m.Text) + EstimateTokens(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += EstimateTokens(c.ID) + EstimateTokens(c.Name) + EstimateTokens(c.Arguments)
	}
	return n
}

func toolTokens(t model.Tool) int {
	return EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Schema))
}

func estimateInput(r Receipt) int64 {
	var n int64
	for _, s := range r.Sections {
		n += int64(s.EstimatedTokens)
	}
	for _, p := range r.Messages {
		if p.Kind != PartSection {
			n += int64(p.EstimatedTokens)
		}
	}
	for _, p := range r.Tools {
		n += int64(p.EstimatedTokens)
	}
	return n + int64(MessageOverheadTokens*len(r.Messages))
}

func overflow(r Receipt) *ContextOverflowError {
	e := &ContextOverflowError{Model: r.Model, ContextWindow: r.ContextWindow, EstimatedTokens: r.EstimatedInputTokens,
		OverheadTokens: int64(MessageOverheadTokens * len(r.Messages))}
	var all []PartSize
	for _, s := range r.Sections {
		e.SectionTokens += int64(s.EstimatedTokens)
		all = append(all, PartSize{Kind: PartSection, ID: s.ID, Tokens: s.EstimatedTokens})
	}
	for i, p := range r.Messages {
		if p.Kind == PartMessage {
			e.ConversationTokens += int64(p.EstimatedTokens)
			all = append(all, PartSize{Kind: PartMessage, ID: fmt.Sprintf("messages[%d] (%s)", i, p.Role), Tokens: p.EstimatedTokens})
		}
	}
	for _, p := range r.Tools {
		e.ToolTokens += int64(p.EstimatedTokens)
		all = append(all, PartSize{Kind: PartTool, ID: p.Name, Tokens: p.EstimatedTokens})
	}
	slices.SortStableFunc(all, func(a, b PartSize) int { return cmp.Compare(b.Tokens, a.Tokens) })
	e.Largest = all[:min(len(all), 5)]
	return e
}

// checkTools validates the tool set in input order, so errors name the caller's indices, and
// returns it sorted by name: a tool set is a set, and a caller that builds it from a map
// must still get a byte-identical request.
//
// check walks the conversation from where it stopped: the History's check, prepared by
// Assemble, so a step validates only its new messages.
func checkTools(in Input, check *model.ConversationCheck) ([]ToolDecl, error) {
	plain := make([]model.Tool, len(in.Tools))
	for i, t := range in.Tools {
		plain[i] = t.Tool
	}
	// Validating the conversation and tools on their own keeps the error's indices those of
	// the caller's slices rather than of the assembled request.
	if in.ContextWindow < 0 {
		return nil, invalid("contextWindow", fmt.Sprintf("is %d", in.ContextWindow), "use 0 when the window is unknown")
	}
	if len(in.Conversation) == 0 {
		return nil, invalid("conversation", "is empty", "assemble a prompt for a step that has user input")
	}
	probe := model.Request{Model: in.Model, Messages: in.Conversation, Tools: plain, ToolChoice: in.ToolChoice, MaxTokens: in.MaxTokens}
	if err := probe.ValidateWith(check); err != nil {
		return nil, err
	}
	tools := slices.Clone(in.Tools)
	slices.SortFunc(tools, func(a, b ToolDecl) int { return strings.Compare(a.Name, b.Name) })
	return tools, nil
}

func hostSection(id, lane string) events.PromptSection {
	return events.PromptSection{ID: id, Lane: lane, Source: RuntimeSource(id), Role: string(model.RoleDeveloper),
		Trust: TrustHost, Priority: priority(TrustHost, 0)}
}

// sectionList collects a prompt's sections, refusing bad ones.
type sectionList struct {
	out []Section
	ids map[string]bool
}

// add appends a section; raw is the caller's text before any framing: an empty file says
// nothing, framed or not.
func (l *sectionList) add(field string, s events.PromptSection, content, raw string) error {
	if !utf8.ValidString(content) {
		return invalid(field, "is not valid UTF-8",
			"re-encode the file as UTF-8; its bytes are sent verbatim, so they must be text")
	}
	if strings.TrimSpace(raw) == "" {
		return nil // nothing to say produces no section, as an absent capability does
	}
	if _, ok := trustRank[s.Trust]; !ok {
		return invalid(field+".trust", fmt.Sprintf("%q is not a trust level", s.Trust), "use host, user, project or session")
	}
	if s.Source == "" {
		return invalid(field+".source", "is empty", "name where the text came from (a path or a definition)")
	}
	if l.ids[s.ID] {
		return invalid(field, fmt.Sprintf("section id %q is produced twice", s.ID), "give each file a distinct path")
	}
	l.ids[s.ID] = true
	l.out = append(l.out, Section{PromptSection: s, Content: content})
	return nil
}

// addFramed adds a file's text under a header that says where it came from.
func (l *sectionList) addFramed(field string, s events.PromptSection, raw, header string) error {
	s.SourceSHA256 = digestString(raw)
	return l.add(field, s, header+"\n\n"+raw, raw)
}

func buildSections(in Input, tools []ToolDecl, workState string) ([]Section, error) {
	l := &sectionList{ids: map[string]bool{}}
	if in.Agent.Name == "" {
		return nil, invalid("agent.name", "is empty", "name the agent the prompt is for")
	}
	if err := l.add("agent", events.PromptSection{ID: "agent." + in.Agent.Name, Lane: LaneAgentRole, Source: in.Agent.Source,
		Role: string(model.RoleSystem), Trust: in.Agent.Trust, Priority: priority(in.Agent.Trust, 0)}, in.Agent.Text, in.Agent.Text); err != nil {
		return nil, err
	}

	switch in.Mode {
	case ModeNone:
	case ModePlan, ModeWork:
		id := "mode." + in.Mode
		if err := l.add("mode", hostSection(id, LaneMode), modeText[in.Mode], modeText[in.Mode]); err != nil {
			return nil, err
		}
	default:
		return nil, invalid("mode", fmt.Sprintf("%q is not a collaboration mode", in.Mode), "use plan, work or leave it empty")
	}

	for _, s := range runtimeSections(tools, in.Runtime, workState != "") {
		if err := l.add("runtime", s.PromptSection, s.Content, s.Content); err != nil {
			return nil, err
		}
	}
	if err := l.addAgentsFiles(in); err != nil {
		return nil, err
	}
	if workState != "" {
		if err := l.add("workState", hostSection(SectionWorkState, LaneWorkState), workState, workState); err != nil {
			return nil, err
		}
	}
	if err := l.addSkills(in.Skills); err != nil {
		return nil, err
	}
	if err := l.addMemory(in.Memory); err != nil {
		return nil, err
	}
	return l.out, nil
}

// addAgentsFiles adds the global AGENTS.md, then the project's, shallowest first, so that a
// deeper file, which wins a conflict, comes later.
func (l *sectionList) addAgentsFiles(in Input) error {
	if g := in.GlobalAgents; g != nil {
		if g.Path == "" {
			return invalid("globalAgents.path", "is empty", "give the path the file was read from")
		}
		if err := l.addFramed("globalAgents", events.PromptSection{ID: "agents.global", Lane: LaneGlobalAgents, Source: g.Path,
			Role: string(model.RoleDeveloper), Trust: TrustUser, Priority: priority(TrustUser, 0)},
			string(g.Content), "Global AGENTS.md instructions from "+g.Path+":"); err != nil {
			return err
		}
	}

	project := slices.Clone(in.ProjectAgents)
	for i, f := range project {
		if f.Path == "" {
			return invalid(fmt.Sprintf("projectAgents[%d].path", i), "is empty", "give the path the file was read from")
		}
	}
	slices.SortStableFunc(project, func(a, b InstructionFile) int {
		return cmp.Or(cmp.Compare(pathDepth(a.Path), pathDepth(b.Path)), strings.Compare(a.Path, b.Path))
	})
	for i, f := range project {
		dir := filepath.Dir(filepath.Clean(f.Path))
		if err := l.addFramed(fmt.Sprintf("projectAgents[%d]", i), events.PromptSection{ID: "agents.project:" + f.Path,
			Lane: LaneProjectAgents, Source: f.Path, Role: string(model.RoleDeveloper), Trust: TrustProject,
			Priority: priority(TrustProject, pathDepth(f.Path))},
			string(f.Content), "AGENTS.md instructions from "+f.Path+". They apply to files under "+dir+
				"; where they conflict with an AGENTS.md higher up, these win."); err != nil {
			return err
		}
	}
	return nil
}

func pathDepth(p string) int {
	return strings.Count(filepath.ToSlash(filepath.Clean(p)), "/")
}

// MessageTokens is the estimate Assemble counts for one conversation message, its framing
// included: what a compaction weighs to choose its boundary (docs/compaction.md).
func MessageTokens(m model.Message) int64 {
	return int64(messageTokens(m) + MessageOverheadTokens)
}
