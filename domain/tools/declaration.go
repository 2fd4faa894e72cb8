// Package tools is the pure policy of tool calls: what a tool declares about itself (side
// effect, replay, concurrency), which tools are enabled, how one model turn's calls are
// scheduled, and what a restart makes of calls that were cut short.
//
// A tool carries three independent declarations, and each defaults to its strictest value, so
// a tool that declares nothing (an unknown harness or MCP tool) fails closed: SideEffecting,
// replayed Never, Exclusive. The zero value of each type is that default.
//
// Like the rest of domain it is pure: no I/O, no clock, no randomness. Validation of a call's
// arguments and the permission gate are supplied by the caller as functions.
package tools

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// Stable error codes of this package, in the style of domain's codes: they reach the CLI's
// JSON output, so they never change meaning.
const (
	// CodeUnknownTool: a name in the tools config (or a lookup) names no declared tool.
	CodeUnknownTool = "unknown_tool"
	// CodeDuplicateTool: two declarations share one name.
	CodeDuplicateTool = "duplicate_tool"
	// CodeDuplicateToolCall: two calls of one model turn share one call id, so their results
	// could not be told apart.
	CodeDuplicateToolCall = "duplicate_tool_call_id"
)

// SideEffect says what a call does to the world: one of the seeds' four classes (docs/tools.md,
// "Side effects"). The zero value is SideEffecting, the strictest: it needs a fresh approval
// in strict mode, so a tool that declares nothing (an unknown MCP tool) fails closed.
type SideEffect int

const (
	// SideEffecting changes state or reaches outside. The default.
	SideEffecting SideEffect = iota
	// ReadOnly observes state without changing it.
	ReadOnly
	// UserMediated needs a human's input by design (the question tool, which the next
	// issues add): it is not an approval surface, so strict mode does not ask before it.
	UserMediated
	// Delegating runs child work that carries its own side effects (task, a foreground
	// child, from the delegation issue): strict mode asks before it, and each child call is
	// evaluated again on its own.
	Delegating
)

var sideEffectNames = [...]string{"SideEffecting", "ReadOnly", "UserMediated", "Delegating"}

// StrictAsks says whether strict mode asks for a fresh approval before a call of this class
// (seeds 000, "副作用分类"): SideEffecting and Delegating do; ReadOnly and UserMediated do not.
func (s SideEffect) StrictAsks() bool { return s == SideEffecting || s == Delegating }

func (s SideEffect) String() string {
	if s >= 0 && int(s) < len(sideEffectNames) {
		return sideEffectNames[s]
	}
	return fmt.Sprintf("SideEffect(%d)", int(s))
}

// Replay says whether a failed call may be tried again. The zero value is Never: tool
// execution is at most once unless an implementation declares Safe.
type Replay int

const (
	// Never: persist the result, hand the next step to the model, and have it check the
	// authoritative state before any new change. The default.
	Never Replay = iota
	// Safe: may be tried again after a backoff (read-only or idempotent checks).
	Safe
)

var replayNames = [...]string{"Never", "Safe"}

func (r Replay) String() string {
	if r >= 0 && int(r) < len(replayNames) {
		return replayNames[r]
	}
	return fmt.Sprintf("Replay(%d)", int(r))
}

// Concurrency says whether a call may overlap other calls. It is independent of Replay. The
// zero value is Exclusive.
type Concurrency int

const (
	// Exclusive is a two-way barrier: earlier overlapping calls settle first, and no later
	// call starts before it settles. The default.
	Exclusive Concurrency = iota
	// ParallelSafe may overlap other non-exclusive calls within the configured limit.
	ParallelSafe
)

var concurrencyNames = [...]string{"Exclusive", "ParallelSafe"}

func (c Concurrency) String() string {
	if c >= 0 && int(c) < len(concurrencyNames) {
		return concurrencyNames[c]
	}
	return fmt.Sprintf("Concurrency(%d)", int(c))
}

// Policy is the three declarations together, for a tool or for one action of a mixed tool.
// The zero Policy is the strictest: SideEffecting, Never, Exclusive.
type Policy struct {
	SideEffect  SideEffect
	Replay      Replay
	Concurrency Concurrency
}

func (p Policy) validate(field string) error {
	if p.SideEffect < SideEffecting || p.SideEffect > Delegating {
		return domain.Invalid(field+".side_effect", fmt.Sprintf("%d is not a side-effect class", int(p.SideEffect)),
			"use ReadOnly, UserMediated, Delegating or SideEffecting")
	}
	if p.Replay < Never || p.Replay > Safe {
		return domain.Invalid(field+".replay", fmt.Sprintf("%d is not a replay policy", int(p.Replay)), "use Never or Safe")
	}
	if p.Concurrency < Exclusive || p.Concurrency > ParallelSafe {
		return domain.Invalid(field+".concurrency", fmt.Sprintf("%d is not a concurrency policy", int(p.Concurrency)),
			"use Exclusive or ParallelSafe")
	}
	return nil
}

// Overlaps reports whether a call with this policy may run beside other non-exclusive calls.
func (p Policy) Overlaps() bool { return p.Concurrency != Exclusive }

// Classifier decides the policy of one call of a mixed tool from its validated action. ok is
// false for a missing or unknown action.
type Classifier func(action string) (p Policy, ok bool)

// ByAction is a Classifier over a fixed table of actions.
func ByAction(table map[string]Policy) Classifier {
	return func(action string) (Policy, bool) {
		p, ok := table[action]
		return p, ok
	}
}

// Declaration is what a tool says about itself.
type Declaration struct {
	// Name is the name the model calls the tool by.
	Name string
	// Policy applies to every call of a tool that is not mixed.
	Policy Policy
	// Classify, when set, makes the tool mixed: each call's policy comes from its validated
	// action (bg list is ReadOnly, bg cancel SideEffecting), and Policy is not used.
	Classify Classifier
}

// Mixed reports whether the tool is classified per call.
func (d Declaration) Mixed() bool { return d.Classify != nil }

// PolicyFor returns the policy of one call whose arguments validated to action. A mixed tool
// with a missing or unknown action fails closed to the zero (strictest) Policy (see
// "Declarations" in docs/tools.md).
func (d Declaration) PolicyFor(action string) Policy {
	if d.Classify == nil {
		return d.Policy
	}
	if p, ok := d.Classify(action); ok && p.validate("") == nil {
		return p
	}
	return Policy{}
}

// Registry is the declared tools and which of them the tools config enables. It is
// immutable; Configure returns a new one.
type Registry struct {
	decls    []Declaration
	index    map[string]int
	disabled map[string]bool
}

// NewRegistry declares tools. Names must be non-empty and unique, and every declared policy
// must be a known value. All tools start enabled.
func NewRegistry(decls ...Declaration) (*Registry, error) {
	r := &Registry{index: make(map[string]int, len(decls)), disabled: map[string]bool{}}
	for i, d := range decls {
		field := fmt.Sprintf("tools[%d]", i)
		if strings.TrimSpace(d.Name) == "" || d.Name != strings.TrimSpace(d.Name) {
			return nil, domain.Invalid(field+".name", fmt.Sprintf("%q is not a tool name", d.Name),
				"give the tool a non-empty name without surrounding spaces")
		}
		if _, dup := r.index[d.Name]; dup {
			e := domain.NewError(CodeDuplicateTool, fmt.Sprintf("tool %q is declared twice", d.Name),
				"declare each tool once")
			e.Field, e.ID = field+".name", d.Name
			return nil, e
		}
		if err := d.Policy.validate(field + ".policy"); err != nil {
			return nil, err
		}
		r.index[d.Name] = i
		r.decls = append(r.decls, d)
	}
	return r, nil
}

// Configure applies the top-level tools map (name -> enabled). It is availability, not
// authorisation. A name that no tool declares is an unknown_tool error listing the valid
// names; tools the map does not mention keep the state they had.
func (r *Registry) Configure(enabled map[string]bool) (*Registry, error) {
	names := make([]string, 0, len(enabled))
	for name := range enabled {
		names = append(names, name)
	}
	sort.Strings(names) // the first unknown name reported is stable
	next := &Registry{decls: r.decls, index: r.index, disabled: make(map[string]bool, len(r.disabled))}
	for name, off := range r.disabled {
		next.disabled[name] = off
	}
	for _, name := range names {
		if _, ok := r.index[name]; !ok {
			e := domain.NewError(CodeUnknownTool, fmt.Sprintf("no tool is named %q", name),
				"remove it from the tools map or spell one of the valid names")
			e.Field, e.ID, e.Valid = "tools."+name, name, r.Names()
			return nil, e
		}
		if enabled[name] {
			delete(next.disabled, name)
		} else {
			next.disabled[name] = true
		}
	}
	return next, nil
}

// Names returns every declared tool name, enabled or not, sorted.
func (r *Registry) Names() []string {
	names := make([]string, len(r.decls))
	for i, d := range r.decls {
		names[i] = d.Name
	}
	sort.Strings(names)
	return names
}

// Enabled returns the enabled declarations in declaration order: the tool surface.
func (r *Registry) Enabled() []Declaration {
	var out []Declaration
	for _, d := range r.decls {
		if !r.disabled[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

// Lookup returns a declared tool whether or not it is enabled.
func (r *Registry) Lookup(name string) (Declaration, bool) {
	i, ok := r.index[name]
	if !ok {
		return Declaration{}, false
	}
	return r.decls[i], true
}

// Resolve returns the tool a call names, or the unavailable block for a tool that is not
// declared or is disabled.
func (r *Registry) Resolve(name string) (Declaration, *Block) {
	d, ok := r.Lookup(name)
	if !ok {
		return Declaration{}, &Block{Kind: BlockUnavailable,
			Message: fmt.Sprintf("no tool is named %q", name),
			Fix:     "call one of the tools you were given"}
	}
	if r.disabled[name] {
		return Declaration{}, &Block{Kind: BlockUnavailable,
			Message: fmt.Sprintf("tool %q is disabled by the tools config", name),
			Fix:     "use another tool, or ask the user to enable it"}
	}
	return d, nil
}
