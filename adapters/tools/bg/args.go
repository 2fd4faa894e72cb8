package bg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zuno-run/zuno/domain"
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

// applies says which arguments each action takes. Anything else is refused:
// an argument that does nothing is the model's misunderstanding, and saying
// so is cheaper than letting it believe the argument took effect.
var applies = map[string]map[string]bool{
	ActionList:     {},
	ActionOutput:   {"taskID": true, "cursor": true, "limit": true},
	ActionWait:     {"taskID": true, "cursor": true, "limit": true, "timeoutMs": true},
	ActionArtifact: {"outputPath": true, "cursor": true, "limit": true},
	ActionCancel:   {"taskID": true},
}

var known = []string{"action", "taskID", "outputPath", "cursor", "limit", "timeoutMs"}

// parseArgs strictly decodes a bg call: one JSON object, exact
// (case-sensitive) names, no unknown or inapplicable fields, JSON null
// meaning absent. Errors are *domain.Error.
func parseArgs(raw json.RawMessage) (args, error) {
	fields, names, err := presentFields(raw)
	if err != nil {
		return args{}, err
	}
	a, err := parseAction(fields, names)
	if err != nil {
		return args{}, err
	}
	if err := a.parseTargets(fields); err != nil {
		return args{}, err
	}
	if err := a.parseWindow(fields); err != nil {
		return args{}, err
	}
	if err := a.requireTarget(); err != nil {
		return args{}, err
	}
	return a, nil
}

// presentFields decodes the object and returns its fields that are not null, with their
// names sorted (so the first error reported is stable); an unknown name is refused.
func presentFields(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(fields))
	for name, v := range fields {
		if string(v) == "null" {
			delete(fields, name)
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !contains(known, name) {
			field := name
			if field == "" {
				field = "arguments"
			}
			return nil, nil, domain.Invalid(field, fmt.Sprintf("unknown argument %q", name),
				"use only "+strings.Join(known, ", ")+" (names are case-sensitive)")
		}
	}
	return fields, names, nil
}

// parseAction reads the required action and refuses a field that does not apply to it.
func parseAction(fields map[string]json.RawMessage, names []string) (args, error) {
	var a args
	rawAction, ok := fields["action"]
	if !ok {
		return a, domain.Invalid("action", "action is required",
			"set action to one of "+strings.Join(actions, ", "))
	}
	if err := json.Unmarshal(rawAction, &a.Action); err != nil || !contains(actions, a.Action) {
		e := domain.Invalid("action", fmt.Sprintf("action %s is not a bg action", rawAction),
			"set action to one of "+strings.Join(actions, ", "))
		e.Valid = actions
		return args{}, e
	}
	for _, name := range names {
		if name != "action" && !applies[a.Action][name] {
			return args{}, domain.Invalid(name, fmt.Sprintf("%s does not apply to action %s", name, a.Action),
				"remove it; "+usage[a.Action])
		}
	}
	return a, nil
}

// parseTargets reads what the call is about: a task or a withheld-output artifact.
func (a *args) parseTargets(fields map[string]json.RawMessage) error {
	if v, ok := fields["taskID"]; ok {
		if err := json.Unmarshal(v, &a.TaskID); err != nil {
			return domain.Invalid("taskID", "taskID must be a string", "pass the id that started the task, e.g. \"bg_0123456789ab\"")
		}
	}
	if v, ok := fields["outputPath"]; ok {
		if err := json.Unmarshal(v, &a.OutputPath); err != nil {
			return domain.Invalid("outputPath", "outputPath must be a string", "pass the path from the withheld-output notice")
		}
	}
	return nil
}

// parseWindow reads the window (cursor, limit) and the wait's timeout; out-of-range limits
// and timeouts are clamped, never rejected.
func (a *args) parseWindow(fields map[string]json.RawMessage) error {
	if v, ok := fields["cursor"]; ok {
		c, err := integer(v)
		if err != nil || c < 0 {
			return domain.Invalid("cursor", fmt.Sprintf("cursor %s is not a byte offset", v),
				"pass a non-negative integer returned as cursor or windowFrom by an earlier window, or omit it")
		}
		a.Cursor = &c
	}
	if v, ok := fields["limit"]; ok {
		l, err := integer(v)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return domain.Invalid("limit", fmt.Sprintf("limit %s is not an integer", v),
				fmt.Sprintf("pass a window size in bytes (default %d, at most %d), or omit it", DefaultLimit, MaxLimit))
		}
		a.Limit = int(max(math.MinInt32, min(l, math.MaxInt32)))
	}
	a.Timeout = DefaultWaitTimeout
	if v, ok := fields["timeoutMs"]; ok {
		ms, err := integer(v)
		if (err != nil && !errors.Is(err, strconv.ErrRange)) || ms < 0 {
			return domain.Invalid("timeoutMs", fmt.Sprintf("timeoutMs %s is not a non-negative integer", v),
				fmt.Sprintf("pass milliseconds to wait (default %d, at most %d), or omit it",
					DefaultWaitTimeout.Milliseconds(), MaxWaitTimeout.Milliseconds()))
		}
		a.Timeout = time.Duration(min(ms, MaxWaitTimeout.Milliseconds())) * time.Millisecond
	}
	return nil
}

// requireTarget refuses an action without the task or artifact it needs.
func (a *args) requireTarget() error {
	switch a.Action {
	case ActionOutput, ActionWait, ActionCancel:
		if strings.TrimSpace(a.TaskID) == "" {
			return domain.Invalid("taskID", "taskID is required for action "+a.Action,
				"pass the task's id; action list shows every task")
		}
	case ActionArtifact:
		if strings.TrimSpace(a.OutputPath) == "" {
			return domain.Invalid("outputPath", "outputPath is required for action artifact",
				"pass the path from the withheld-output notice")
		}
	}
	return nil
}

var usage = map[string]string{
	ActionList:     "action list takes no other arguments",
	ActionOutput:   "action output takes taskID, cursor and limit",
	ActionWait:     "action wait takes taskID, timeoutMs, cursor and limit",
	ActionArtifact: "action artifact takes outputPath, cursor and limit",
	ActionCancel:   "action cancel takes taskID",
}

// decodeObject decodes exactly one JSON object into its raw fields.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	bad := func(msg string) error {
		return domain.Invalid("arguments", msg, `pass one JSON object, e.g. {"action":"list"}`)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, bad("the arguments are empty")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, bad("the arguments are not a JSON object: " + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("the arguments have data after the JSON object")
	}
	if fields == nil { // a bare null
		fields = map[string]json.RawMessage{}
	}
	return fields, nil
}

// integer parses a JSON number that has an integral value ("12", "12.0",
// "1.2e3"). A value outside int64 is returned saturated with strconv.ErrRange.
func integer(v json.RawMessage) (int64, error) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		// encoding/json would take a quoted number into json.Number; the
		// schema says integer, so a string is refused.
		return 0, fmt.Errorf("%s is not a JSON number", v)
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, err
	}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	if math.IsNaN(f) || f != math.Trunc(f) {
		return 0, fmt.Errorf("%s is not an integer", n)
	}
	if f >= math.MaxInt64 {
		return math.MaxInt64, strconv.ErrRange
	}
	if f <= math.MinInt64 {
		return math.MinInt64, strconv.ErrRange
	}
	return int64(f), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
