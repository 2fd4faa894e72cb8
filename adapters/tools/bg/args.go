package bg

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain/tools"
)

// The actions of the bg tool.
const (
	ActionList     = "list"
	ActionOutput   = "output"
	ActionWait     = "wait"
	ActionArtifact = "artifact"
	ActionCancel   = "cancel"
)

var actions = []string{ActionList, ActionOutput, ActionWait, ActionArtifact, ActionCancel}

// Wait bounds for the tool: one bg wait observation lasts at most 60 s (docs/tools.md,
// "Background commands"); a longer request is clamped, and running out is not a failure of
// the task nor a detach, so the model simply waits again on the same task. The default is
// the whole observation: a wait that is asked for is a wait for the end.
const (
	DefaultWaitTimeout = 60 * time.Second
	MaxWaitTimeout     = 60 * time.Second
)

// args is one validated bg call.
type args struct {
	Action     string
	TaskID     string
	OutputPath string
	Cursor     *int64
	Limit      int
	Timeout    time.Duration
}

// known is every argument of the bg tool, in the schema's order.
var known = []string{"action", "taskID", "outputPath", "cursor", "limit", "timeoutMs"}

// argsSchema is the schema of tool.go compiled from the very bytes the model is shown, with
// what JSON Schema cannot say: which arguments each action takes (anything else is refused:
// an argument that does nothing is the model's misunderstanding, and saying so is cheaper
// than letting it believe the argument took effect), the target each action needs, and
// numbers out of range taken as the nearest bound (limit and timeoutMs are clamped, never
// refused).
var argsSchema = schema.MustCompile(tools.NameBg, []byte(schemaText), schema.Rules{
	Example:      `{"action": "output", "taskID": "bg_0123456789ab"}`,
	NullIsEmpty:  true,
	NullIsAbsent: true,
	Fields: map[string]schema.Field{
		"taskID":     {Fix: `pass the task's id, e.g. "bg_0123456789ab"; action list shows every task`},
		"outputPath": {Fix: "pass the path from the withheld-output notice"},
		"cursor": {Numbers: schema.Integral,
			Fix: "pass a non-negative integer returned as cursor or windowFrom by an earlier window, or omit it"},
		"limit": {Numbers: schema.Saturating,
			Fix: fmt.Sprintf("pass a window size in bytes (default %d, at most %d), or omit it", DefaultLimit, MaxLimit)},
		"timeoutMs": {Numbers: schema.Saturating,
			Fix: fmt.Sprintf("pass milliseconds to wait (default %d, at most %d), or omit it",
				DefaultWaitTimeout.Milliseconds(), MaxWaitTimeout.Milliseconds())},
	},
	Choice: &schema.Choice{By: "action",
		Takes: map[string][]string{
			ActionList:     {},
			ActionOutput:   {"taskID", "cursor", "limit"},
			ActionWait:     {"taskID", "timeoutMs", "cursor", "limit"},
			ActionArtifact: {"outputPath", "cursor", "limit"},
			ActionCancel:   {"taskID"},
		},
		Needs: map[string]string{ActionOutput: "taskID", ActionWait: "taskID", ActionCancel: "taskID", ActionArtifact: "outputPath"},
	},
})

// parseArgs validates a bg call against argsSchema and reads it; out-of-range limits and
// timeouts are clamped here, so Execute never sees an absurd value. Errors are *domain.Error.
func parseArgs(raw json.RawMessage) (args, error) {
	v, err := argsSchema.Validate(raw)
	if err != nil {
		return args{}, err
	}
	a := args{Timeout: DefaultWaitTimeout}
	a.Action, _ = v["action"].(string)
	a.TaskID, _ = v["taskID"].(string)
	a.OutputPath, _ = v["outputPath"].(string)
	if c, ok := v["cursor"]; ok {
		n, _ := schema.Int64(c)
		a.Cursor = &n
	}
	if l, ok := v["limit"]; ok {
		n, _ := schema.Int64(l)
		a.Limit = int(max(math.MinInt32, min(n, math.MaxInt32)))
	}
	if t, ok := v["timeoutMs"]; ok {
		ms, _ := schema.Int64(t)
		a.Timeout = time.Duration(min(ms, MaxWaitTimeout.Milliseconds())) * time.Millisecond
	}
	return a, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
