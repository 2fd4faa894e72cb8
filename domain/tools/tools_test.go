package tools_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
)

var (
	readSafe = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	bgPolicy = tools.ByAction(map[string]tools.Policy{
		"list":     readSafe,
		"output":   readSafe,
		"wait":     readSafe,
		"artifact": readSafe,
		"cancel":   {SideEffect: tools.SideEffecting},
	})
)

func registry(t *testing.T) *tools.Registry {
	t.Helper()
	r, err := tools.NewRegistry(
		tools.Declaration{Name: "read", Policy: readSafe},
		tools.Declaration{Name: "grep", Policy: readSafe},
		tools.Declaration{Name: "webfetch", Policy: readSafe},
		tools.Declaration{Name: "shell"},
		tools.Declaration{Name: "write"},
		tools.Declaration{Name: "task"},
		tools.Declaration{Name: "question"},
		tools.Declaration{Name: "bg", Classify: bgPolicy},
	)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func code(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	if err != nil {
		return "untyped"
	}
	return ""
}

// Seeds 000, "副作用分类": the four classes and whether strict mode asks before each
// (ReadOnly 不需要; UserMediated 不是批准面; Delegating 每次子级调用重新评估, and delegation
// receives the strict ask; SideEffecting 需要一次新的批准).
func TestSideEffectClasses(t *testing.T) {
	for _, tc := range []struct {
		class tools.SideEffect
		asks  bool
	}{
		{tools.ReadOnly, false}, {tools.UserMediated, false}, {tools.Delegating, true}, {tools.SideEffecting, true},
	} {
		if got := tc.class.StrictAsks(); got != tc.asks {
			t.Errorf("%s: strict asks %v, want %v", tc.class, got, tc.asks)
		}
		if _, err := tools.NewRegistry(tools.Declaration{Name: "x", Policy: tools.Policy{SideEffect: tc.class}}); err != nil {
			t.Errorf("%s: refused: %v", tc.class, err)
		}
	}
}

func TestZeroValuesAreStrictest(t *testing.T) {
	var p tools.Policy
	if p.SideEffect != tools.SideEffecting || p.Replay != tools.Never || p.Concurrency != tools.Exclusive || p.Overlaps() {
		t.Errorf("zero policy %+v", p)
	}
	names := []struct{ got, want string }{
		{tools.SideEffecting.String(), "SideEffecting"},
		{tools.ReadOnly.String(), "ReadOnly"},
		{tools.UserMediated.String(), "UserMediated"},
		{tools.Delegating.String(), "Delegating"},
		{tools.SideEffect(4).String(), "SideEffect(4)"},
		{tools.SideEffect(9).String(), "SideEffect(9)"},
		{tools.Never.String(), "Never"},
		{tools.Safe.String(), "Safe"},
		{tools.Replay(-1).String(), "Replay(-1)"},
		{tools.Exclusive.String(), "Exclusive"},
		{tools.ParallelSafe.String(), "ParallelSafe"},
		{tools.Concurrency(2).String(), "Concurrency(2)"},
		{tools.Concurrency(3).String(), "Concurrency(3)"},
	}
	for _, n := range names {
		if n.got != n.want {
			t.Errorf("got %q, want %q", n.got, n.want)
		}
	}
}

func TestPolicyFor(t *testing.T) {
	bg := tools.Declaration{Name: "bg", Policy: readSafe, Classify: bgPolicy}
	tests := []struct {
		name   string
		decl   tools.Declaration
		action string
		want   tools.Policy
	}{
		{"plain tool ignores action", tools.Declaration{Name: "read", Policy: readSafe}, "cancel", readSafe},
		{"undeclared tool fails closed", tools.Declaration{Name: "mcp_x"}, "", tools.Policy{}},
		{"bg list read-only", bg, "list", readSafe},
		{"bg output read-only", bg, "output", readSafe},
		{"bg artifact read-only", bg, "artifact", readSafe},
		{"bg wait read-only", bg, "wait", readSafe},
		{"bg cancel side-effecting", bg, "cancel", tools.Policy{}},
		{"missing action fails closed, not to Policy", bg, "", tools.Policy{}},
		{"unknown action fails closed", bg, "purge", tools.Policy{}},
		{"classifier returning an invalid policy fails closed",
			tools.Declaration{Name: "odd", Classify: func(string) (tools.Policy, bool) {
				return tools.Policy{SideEffect: 7, Concurrency: tools.ParallelSafe}, true
			}}, "x", tools.Policy{}},
	}
	for _, tt := range tests {
		if got := tt.decl.PolicyFor(tt.action); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if !bg.Mixed() || (tools.Declaration{}).Mixed() {
		t.Error("Mixed")
	}
}

func TestNewRegistryErrors(t *testing.T) {
	tests := []struct {
		name  string
		decls []tools.Declaration
		code  string
		field string
	}{
		{"empty name", []tools.Declaration{{Name: ""}}, domain.CodeInvalidArgument, "tools[0].name"},
		{"spaced name", []tools.Declaration{{Name: "read "}}, domain.CodeInvalidArgument, "tools[0].name"},
		{"duplicate", []tools.Declaration{{Name: "read"}, {Name: "read"}}, tools.CodeDuplicateTool, "tools[1].name"},
		{"bad side effect", []tools.Declaration{{Name: "x", Policy: tools.Policy{SideEffect: 4}}}, domain.CodeInvalidArgument, "tools[0].policy.side_effect"},
		{"bad replay", []tools.Declaration{{Name: "x", Policy: tools.Policy{Replay: 2}}}, domain.CodeInvalidArgument, "tools[0].policy.replay"},
		{"bad concurrency", []tools.Declaration{{Name: "x", Policy: tools.Policy{Concurrency: -1}}}, domain.CodeInvalidArgument, "tools[0].policy.concurrency"},
		{"fine", []tools.Declaration{{Name: "a"}, {Name: "b"}}, "", ""},
	}
	for _, tt := range tests {
		_, err := tools.NewRegistry(tt.decls...)
		if code(err) != tt.code {
			t.Errorf("%s: got %v, want code %q", tt.name, err, tt.code)
			continue
		}
		var de *domain.Error
		if err != nil && (!errors.As(err, &de) || de.Field != tt.field) {
			t.Errorf("%s: field of %v, want %q", tt.name, err, tt.field)
		}
	}
}

func TestConfigure(t *testing.T) {
	base := registry(t)
	tests := []struct {
		name    string
		config  []map[string]bool // applied in turn
		enabled []string
		code    string
	}{
		{"no config", nil, []string{"read", "grep", "webfetch", "shell", "write", "task", "question", "bg"}, ""},
		{"disable webfetch", []map[string]bool{{"webfetch": false}}, []string{"read", "grep", "shell", "write", "task", "question", "bg"}, ""},
		{"true is a no-op", []map[string]bool{{"shell": true}}, []string{"read", "grep", "webfetch", "shell", "write", "task", "question", "bg"}, ""},
		{"re-enable", []map[string]bool{{"webfetch": false, "bg": false}, {"webfetch": true}}, []string{"read", "grep", "webfetch", "shell", "write", "task", "question"}, ""},
		{"unknown name", []map[string]bool{{"webfetch": false, "web_fetch": false}}, nil, tools.CodeUnknownTool},
	}
	for _, tt := range tests {
		r := base
		var err error
		for _, c := range tt.config {
			if r, err = r.Configure(c); err != nil {
				break
			}
		}
		if code(err) != tt.code {
			t.Errorf("%s: got %v, want code %q", tt.name, err, tt.code)
			continue
		}
		if err != nil {
			var de *domain.Error
			errors.As(err, &de)
			if de.ID != "web_fetch" || de.Field != "tools.web_fetch" || !reflect.DeepEqual(de.Valid, base.Names()) {
				t.Errorf("%s: %+v", tt.name, de)
			}
			continue
		}
		var got []string
		for _, d := range r.Enabled() {
			got = append(got, d.Name)
		}
		if !reflect.DeepEqual(got, tt.enabled) {
			t.Errorf("%s: enabled %v, want %v", tt.name, got, tt.enabled)
		}
	}
	// Configure never changes the registry it was called on.
	if _, err := base.Configure(map[string]bool{"read": false}); err != nil || len(base.Enabled()) != 8 {
		t.Errorf("base changed: %v %d", err, len(base.Enabled()))
	}
}

func TestResolve(t *testing.T) {
	r, err := registry(t).Configure(map[string]bool{"webfetch": false})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		blocked bool
		text    string
	}{
		{"read", false, ""},
		{"webfetch", true, "disabled"},
		{"nope", true, "no tool is named"},
	}
	for _, tt := range tests {
		d, b := r.Resolve(tt.name)
		if (b != nil) != tt.blocked {
			t.Errorf("%s: block %+v", tt.name, b)
			continue
		}
		if b == nil && d.Name != tt.name {
			t.Errorf("%s: resolved %q", tt.name, d.Name)
		}
		if b != nil && (b.Kind != tools.BlockUnavailable || !strings.Contains(b.Message, tt.text) || b.Fix == "") {
			t.Errorf("%s: block %+v", tt.name, b)
		}
	}
	if _, ok := r.Lookup("webfetch"); !ok {
		t.Error("Lookup must see disabled tools")
	}
}

func TestCheckConcurrency(t *testing.T) {
	for _, tt := range []struct {
		n  int
		ok bool
	}{{-1, false}, {0, false}, {1, true}, {8, true}, {64, true}, {65, false}, {1000, false}} {
		err := tools.CheckConcurrency("concurrency.tool_calls", tt.n)
		if (err == nil) != tt.ok {
			t.Errorf("%d: %v", tt.n, err)
		}
		if err != nil && (code(err) != domain.CodeInvalidArgument || !strings.HasPrefix(err.Error(), "invalid_argument: concurrency.tool_calls: ")) {
			t.Errorf("%d: %v", tt.n, err)
		}
	}
}

// calls builds model calls "name:action" with ids c0, c1, ...; the action is carried in
// Arguments so the test validator can return it.
func calls(specs ...string) []model.ToolCall {
	out := make([]model.ToolCall, len(specs))
	for i, s := range specs {
		name, action, _ := strings.Cut(s, ":")
		out[i] = model.ToolCall{ID: "c" + string(rune('0'+i)), Name: name, Arguments: action}
	}
	return out
}

// validate treats Arguments "bad" as invalid and returns Arguments as the action.
func validate(call model.ToolCall, _ tools.Declaration) (tools.Parsed, error) {
	if call.Arguments == "bad" {
		e := domain.Invalid("path", "is required", "pass the file path")
		return tools.Parsed{}, e
	}
	if call.Arguments == "junk" {
		return tools.Parsed{}, errors.New("arguments are not JSON")
	}
	return tools.Parsed{Action: call.Arguments, Args: call.Arguments}, nil
}

// denyWrites denies every side-effecting call of write, as a permission rule would.
func denyWrites(c tools.Call) *tools.Block {
	if c.Decl.Name == "write" {
		return &tools.Block{Kind: tools.BlockDenied, Message: "writes are denied"}
	}
	return nil
}

func TestSchedule(t *testing.T) {
	reg, err := registry(t).Configure(map[string]bool{"webfetch": false})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		calls  []model.ToolCall
		gate   tools.Gate
		limit  int
		groups [][]int // entry indexes per group
		excl   []bool  // Exclusive per group
		blocks map[int]tools.BlockKind
	}{
		{name: "empty", limit: 8},
		{name: "reads share a group", calls: calls("read", "grep", "read"), limit: 8,
			groups: [][]int{{0, 1, 2}}, excl: []bool{false}},
		{name: "split at N", calls: calls("read", "grep", "read", "grep", "read"), limit: 2,
			groups: [][]int{{0, 1}, {2, 3}, {4}}, excl: []bool{false, false, false}},
		{name: "limit 1 is serial", calls: calls("read", "grep"), limit: 1,
			groups: [][]int{{0}, {1}}, excl: []bool{false, false}},
		{name: "exclusive splits and stands alone", calls: calls("read", "grep", "shell", "read", "write", "shell", "grep"), limit: 8,
			groups: [][]int{{0, 1}, {2}, {3}, {4}, {5}, {6}}, excl: []bool{false, true, false, true, true, false}},
		{name: "mixed tool classified per call", calls: calls("bg:list", "bg:wait", "bg:cancel", "bg:output", "bg", "bg:artifact"), limit: 8,
			groups: [][]int{{0, 1}, {2}, {3}, {4}, {5}}, excl: []bool{false, true, false, true, false}},
		{name: "mixed blocked and allowed keep model order", calls: calls("read", "nope", "grep:bad", "write", "read", "webfetch", "grep:junk", "shell", "grep"),
			gate: denyWrites, limit: 8,
			groups: [][]int{{0, 4}, {7}, {8}}, excl: []bool{false, true, false},
			blocks: map[int]tools.BlockKind{1: tools.BlockUnavailable, 2: tools.BlockInvalidArguments, 3: tools.BlockDenied, 5: tools.BlockUnavailable, 6: tools.BlockInvalidArguments}},
		{name: "a blocked exclusive call does not split a group", calls: calls("read", "shell", "grep"),
			gate: func(c tools.Call) *tools.Block {
				if c.Decl.Name == "shell" {
					return &tools.Block{Kind: tools.BlockDenied}
				}
				return nil
			}, limit: 8,
			groups: [][]int{{0, 2}}, excl: []bool{false},
			blocks: map[int]tools.BlockKind{1: tools.BlockDenied}},
		{name: "everything blocked", calls: calls("nope", "write"), gate: denyWrites, limit: 8,
			blocks: map[int]tools.BlockKind{0: tools.BlockUnavailable, 1: tools.BlockDenied}},
	}
	for _, tt := range tests {
		plan, err := tools.Schedule(reg, tt.calls, validate, tt.gate, tt.limit)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(plan.Entries) != len(tt.calls) {
			t.Errorf("%s: %d entries for %d calls", tt.name, len(plan.Entries), len(tt.calls))
			continue
		}
		var groups [][]int
		var excl []bool
		for _, g := range plan.Groups {
			groups = append(groups, g.Calls)
			excl = append(excl, g.Exclusive)
		}
		if !reflect.DeepEqual(groups, tt.groups) || !reflect.DeepEqual(excl, tt.excl) {
			t.Errorf("%s: groups %v exclusive %v, want %v %v", tt.name, groups, excl, tt.groups, tt.excl)
		}
		for i, e := range plan.Entries {
			if e.Index != i || e.Call.Call.ID != tt.calls[i].ID {
				t.Errorf("%s: entry %d is %+v", tt.name, i, e.Call)
			}
			want, isBlocked := tt.blocks[i]
			switch {
			case isBlocked && (e.Blocked == nil || e.Blocked.Kind != want || e.Group != -1):
				t.Errorf("%s: entry %d: blocked %+v group %d, want %s", tt.name, i, e.Blocked, e.Group, want)
			case !isBlocked && (e.Blocked != nil || e.Group < 0 || !contains(plan.Groups[e.Group].Calls, i)):
				t.Errorf("%s: entry %d: blocked %+v group %d", tt.name, i, e.Blocked, e.Group)
			}
		}
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestScheduleBlockDetails(t *testing.T) {
	plan, err := tools.Schedule(registry(t), calls("read:bad", "read:junk", "bg:cancel"), validate,
		func(c tools.Call) *tools.Block {
			// The gate sees the classified policy of the mixed call.
			if c.Decl.Name == "bg" && c.Action == "cancel" && c.Policy.SideEffect == tools.SideEffecting {
				return &tools.Block{Kind: tools.BlockDenied, Message: "cancel needs approval"}
			}
			return nil
		}, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := []tools.Block{
		{Kind: tools.BlockInvalidArguments, Message: "is required", Fix: "pass the file path", Field: "path"},
		{Kind: tools.BlockInvalidArguments, Message: "arguments are not JSON", Fix: "correct the arguments and call the tool again"},
		{Kind: tools.BlockDenied, Message: "cancel needs approval"},
	}
	for i, w := range want {
		if b := plan.Entries[i].Blocked; b == nil || *b != w {
			t.Errorf("entry %d: %+v, want %+v", i, b, w)
		}
	}
}

func TestScheduleErrors(t *testing.T) {
	reg := registry(t)
	badGate := func(tools.Call) *tools.Block { return &tools.Block{Kind: "nope"} }
	tests := []struct {
		name  string
		calls []model.ToolCall
		gate  tools.Gate
		limit int
		code  string
	}{
		{"limit 0", calls("read"), nil, 0, domain.CodeInvalidArgument},
		{"limit 65", calls("read"), nil, 65, domain.CodeInvalidArgument},
		{"limit -3", calls("read"), nil, -3, domain.CodeInvalidArgument},
		{"limit 64", calls("read"), nil, 64, ""},
		{"empty id", []model.ToolCall{{Name: "read"}}, nil, 8, domain.CodeInvalidArgument},
		{"duplicate id", []model.ToolCall{{ID: "a", Name: "read"}, {ID: "a", Name: "grep"}}, nil, 8, tools.CodeDuplicateToolCall},
		{"unknown block kind", calls("read"), badGate, 8, domain.CodeInvalidArgument},
	}
	for _, tt := range tests {
		_, err := tools.Schedule(reg, tt.calls, validate, tt.gate, tt.limit)
		if code(err) != tt.code {
			t.Errorf("%s: got %v, want code %q", tt.name, err, tt.code)
		}
	}
}

func TestRecover(t *testing.T) {
	tests := []struct {
		name      string
		calls     []tools.Recorded
		uncertain []string
		cancelled []string
	}{
		{"nothing recorded", nil, nil, nil},
		{"all settled", []tools.Recorded{{ID: "a", Started: true, Settled: true}, {ID: "b", Settled: true}}, nil, nil},
		{"started never settled is uncertain", []tools.Recorded{{ID: "a", Started: true}}, []string{"a"}, nil},
		{"requested never started is cancelled", []tools.Recorded{{ID: "a"}}, nil, []string{"a"}},
		{"mixed keeps order", []tools.Recorded{
			{ID: "a", Started: true, Settled: true},
			{ID: "b", Started: true},
			{ID: "c"},
			{ID: "d", Settled: true}, // blocked: settled without starting
			{ID: "e", Started: true},
			{ID: "f"},
		}, []string{"b", "e"}, []string{"c", "f"}},
	}
	for _, tt := range tests {
		got := tools.Recover(tt.calls)
		if !reflect.DeepEqual(got.Uncertain, tt.uncertain) || !reflect.DeepEqual(got.Cancelled, tt.cancelled) {
			t.Errorf("%s: got %+v, want uncertain %v cancelled %v", tt.name, got, tt.uncertain, tt.cancelled)
		}
	}
}
