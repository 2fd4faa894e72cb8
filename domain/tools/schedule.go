package tools

import (
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
)

// Concurrency limits accept 1..=64 (concurrency.tool_calls, .delegations, ...). 1 restores
// serial behaviour.
const (
	MinConcurrency = 1
	MaxConcurrency = 64
	// DefaultToolCalls is the default of concurrency.tool_calls.
	DefaultToolCalls = 8
	// DefaultDelegations is the default of concurrency.delegations: the delegated children
	// that run at once (docs/delegation.md).
	DefaultDelegations = 8
)

// CheckConcurrency validates one concurrency setting; field names it in the error
// ("concurrency.tool_calls").
func CheckConcurrency(field string, n int) error {
	if n < MinConcurrency || n > MaxConcurrency {
		return domain.Invalid(field, fmt.Sprintf("%d is outside %d..=%d", n, MinConcurrency, MaxConcurrency),
			fmt.Sprintf("set it between %d and %d; 1 runs calls one at a time", MinConcurrency, MaxConcurrency))
	}
	return nil
}

// BlockKind is why a call was blocked before it ran. The values are stable: they are the
// category a dispatch-blocked event records.
type BlockKind string

const (
	BlockInvalidArguments BlockKind = "invalid_arguments"
	BlockUnavailable      BlockKind = "unavailable"
	BlockDenied           BlockKind = "denied"
)

// Valid reports whether k is one of the three kinds.
func (k BlockKind) Valid() bool {
	return k == BlockInvalidArguments || k == BlockUnavailable || k == BlockDenied
}

// Block is a call that was refused before it ran. It is a result, not a failure: the call's
// effect never happened, and the model receives it as an error result (outcome "blocked").
type Block struct {
	Kind BlockKind
	// Message says what is wrong; Fix what to do instead. Field is the argument at fault, for
	// invalid_arguments.
	Message, Fix, Field string
}

// Validator checks a call's arguments against its tool and returns them parsed; the action
// classifies mixed tools ("" for tools without actions). A non-nil error blocks the call as
// invalid_arguments; a *domain.Error keeps its Message, Fix and Field.
type Validator func(call model.ToolCall, decl Declaration) (Parsed, error)

// Gate is the permission gate (and anything else the caller runs before execution: hooks,
// the sandbox resolver). It returns nil to allow the call, or the block that refuses it.
type Gate func(call Call) *Block

// Call is one model tool call resolved to its tool and classified.
type Call struct {
	// Index is the call's position in the model's list.
	Index int
	Call  model.ToolCall
	Decl  Declaration
	// Parsed is what validation made of the arguments; execution takes it as it is.
	Parsed
	Policy Policy
}

// Entry is the plan's decision for one call, in model order.
type Entry struct {
	Call
	// Blocked is non-nil when the call does not run; its result is recorded as it is.
	Blocked *Block
	// Group is the index in Plan.Groups of the group that runs the call, -1 when blocked.
	Group int
}

// Group is calls that start together. Groups run one after another; within a group, calls
// may overlap. An exclusive call is always alone in its group.
type Group struct {
	// Calls are indexes into Plan.Entries, ascending.
	Calls     []int
	Exclusive bool
}

// Plan is how one model turn's tool calls are run.
type Plan struct {
	Entries []Entry
	Groups  []Group
}

// Schedule plans one model turn's tool calls. In model order each call is resolved (a tool
// not declared or disabled is blocked as unavailable), validated (a failure is blocked as
// invalid_arguments), classified from its validated action, and gated (gate may be nil to
// allow everything). Blocked calls get a recorded result and nothing runs for them, so they
// neither join nor split a group. Consecutive non-exclusive allowed calls form parallel
// groups of at most limit calls (concurrency.tool_calls); an exclusive call is its own group.
//
// It returns an error, and no plan, for a limit outside 1..=64, a call without an id, two
// calls sharing an id, or a gate that returns an unknown block kind.
func Schedule(reg *Registry, calls []model.ToolCall, validate Validator, gate Gate, limit int) (Plan, error) {
	if err := CheckConcurrency("concurrency.tool_calls", limit); err != nil {
		return Plan{}, err
	}
	if err := checkCallIDs(calls); err != nil {
		return Plan{}, err
	}
	plan := Plan{Entries: make([]Entry, len(calls))}
	for i, tc := range calls {
		e := Entry{Call: Call{Index: i, Call: tc}, Group: -1}
		e.Blocked = admit(reg, &e.Call, validate, gate)
		if e.Blocked != nil && !e.Blocked.Kind.Valid() {
			return Plan{}, domain.Invalid(fmt.Sprintf("toolCalls[%d]", i),
				fmt.Sprintf("the gate blocked call %q with unknown kind %q", tc.ID, e.Blocked.Kind),
				"block with invalid_arguments, unavailable or denied")
		}
		plan.Entries[i] = e
	}

	open := -1 // index of the parallel group still accepting calls
	for i := range plan.Entries {
		e := &plan.Entries[i]
		if e.Blocked != nil {
			continue
		}
		if !e.Policy.Overlaps() {
			open = -1
			e.Group = len(plan.Groups)
			plan.Groups = append(plan.Groups, Group{Calls: []int{i}, Exclusive: true})
			continue
		}
		if open < 0 || len(plan.Groups[open].Calls) >= limit {
			open = len(plan.Groups)
			plan.Groups = append(plan.Groups, Group{})
		}
		e.Group = open
		plan.Groups[open].Calls = append(plan.Groups[open].Calls, i)
	}
	return plan, nil
}

// admit resolves, validates, classifies and gates one call, filling c; it returns the block
// that stops the call, or nil.
func admit(reg *Registry, c *Call, validate Validator, gate Gate) *Block {
	decl, blocked := reg.Resolve(c.Call.Name)
	if blocked != nil {
		return blocked
	}
	c.Decl = decl
	if validate != nil {
		args, err := SplitCommon(c.Call.Arguments)
		if err != nil {
			return invalidArguments(err)
		}
		call := c.Call
		call.Arguments = args
		parsed, err := validate(call, decl)
		if err != nil {
			return invalidArguments(err)
		}
		c.Parsed = parsed
	}
	c.Policy = decl.PolicyFor(c.Action)
	if gate != nil {
		return gate(*c)
	}
	return nil
}

func invalidArguments(err error) *Block {
	b := &Block{Kind: BlockInvalidArguments, Message: err.Error()}
	var de *domain.Error
	if errors.As(err, &de) {
		b.Message, b.Fix, b.Field = de.Message, de.Fix, de.Field
	}
	if b.Fix == "" {
		b.Fix = "correct the arguments and call the tool again"
	}
	return b
}

func checkCallIDs(calls []model.ToolCall) error {
	seen := make(map[string]int, len(calls))
	for i, tc := range calls {
		field := fmt.Sprintf("toolCalls[%d].id", i)
		if tc.ID == "" {
			return domain.Invalid(field, "is empty", "every tool call needs an id its result can answer")
		}
		if j, dup := seen[tc.ID]; dup {
			e := domain.NewError(CodeDuplicateToolCall,
				fmt.Sprintf("toolCalls[%d] and toolCalls[%d] share the id %q", j, i, tc.ID),
				"give every tool call of a turn its own id")
			e.Field, e.ID = field, tc.ID
			return e
		}
		seen[tc.ID] = i
	}
	return nil
}
