package replay

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/events"
)

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name, recorded, replayed string
		same                     bool
		path, want, got          string
	}{
		{name: "equal", recorded: `{"a":1,"b":[1,2]}`, replayed: `{"b":[1,2],"a":1}`, same: true},
		{name: "wall time is not a decision", recorded: `{"durationMs":12,"x":{"durationMs":3}}`, replayed: `{"durationMs":40,"x":{"durationMs":9}}`, same: true},
		{name: "a retry's jittered wait compares as set", recorded: `{"retryInMs":812}`, replayed: `{"retryInMs":1}`, same: true},
		{name: "a permission decision's prose is not compared", recorded: `{"permission":{"action":"ask","message":"old wording"}}`,
			replayed: `{"permission":{"action":"ask","message":"new wording"}}`, same: true},
		{name: "its action is", recorded: `{"permission":{"action":"ask","message":"m"}}`, replayed: `{"permission":{"action":"allow","message":"m"}}`,
			path: "permission.action", want: `"ask"`, got: `"allow"`},
		{name: "another message is", recorded: `{"error":{"message":"a"}}`, replayed: `{"error":{"message":"b"}}`,
			path: "error.message", want: `"a"`, got: `"b"`},
		{name: "a retry the replay did not make", recorded: `{"retryInMs":812}`, replayed: `{}`, path: "retryInMs", want: `"set"`, got: "(absent)"},
		{name: "first differing key in key order", recorded: `{"b":1,"a":{"c":2}}`, replayed: `{"b":2,"a":{"c":3}}`, path: "a.c", want: "2", got: "3"},
		{name: "array element", recorded: `{"groups":[0,1]}`, replayed: `{"groups":[0,0]}`, path: "groups[1]", want: "1", got: "0"},
		{name: "array longer", recorded: `{"t":[1]}`, replayed: `{"t":[1,2]}`, path: "t[1]", want: "(absent)", got: "2"},
		{name: "field only in the replay", recorded: `{}`, replayed: `{"stepLimitFinalization":{"limit":3}}`, path: "stepLimitFinalization", want: "(absent)", got: `{"limit":3}`},
		{name: "scalar data", recorded: `1`, replayed: `2`, path: "(data)", want: "1", got: "2"},
		{name: "not JSON", recorded: `{`, replayed: `{"a":1}`, path: "", want: "{", got: `{"a":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, want, got, same := diff(json.RawMessage(tc.recorded), json.RawMessage(tc.replayed))
			if same != tc.same || path != tc.path || want != tc.want || got != tc.got {
				t.Fatalf("diff = %q %q %q %v, want %q %q %q %v", path, want, got, same, tc.path, tc.want, tc.got, tc.same)
			}
		})
	}
}

func TestClipKeepsOneLine(t *testing.T) {
	long := make([]byte, 500)
	for i := range long {
		long[i] = 'x'
	}
	if got := clip(long); len(got) > 200 {
		t.Fatalf("clip kept %d bytes", len(got))
	}
}

// FuzzDiff: any two stored payloads compare without panicking, and a payload equals itself.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":2}],"durationMs":3}`), []byte(`{"a":[1,{"b":3}]}`))
	f.Add([]byte(`[]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		diff(a, b)
		if _, _, _, same := diff(a, a); !same && json.Valid(a) {
			t.Fatalf("%q differs from itself", a)
		}
	})
}

// TestGrantsAnOldLogLacks: a grant the replay records where the log has none (a build before
// grants were recorded) is kept without a difference and the recorded events around it are
// still compared; a grant the log holds and the replay does not make is a difference, as is
// one that differs.
func TestGrantsAnOldLogLacks(t *testing.T) {
	reg := events.NewRegistry(events.AllPayloads()...)
	ask := events.PermissionAsked{SessionID: "s", CallID: "c1", AskID: "ask_c1", Tool: "shell", Key: "shell", Mode: "standard", Always: "make *"}
	granted := events.PermissionGranted{SessionID: "s", CallID: "c1", AskID: "ask_c1", Grants: []events.StandingGrant{{Permission: "shell", Pattern: "make *"}}}
	started := events.ToolStarted{SessionID: "s", CallID: "c1", Tool: "shell"}
	event := func(p events.Payload) events.Event {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return events.Event{Type: p.EventType(), Data: data}
	}
	recordedGroup := func(ps ...events.Payload) *group {
		var recs []events.Recorded
		for i, p := range ps {
			recs = append(recs, events.Recorded{Event: event(p), Stream: "session-s", Position: uint64(i + 1), StreamRevision: uint64(i)})
		}
		g, err := newGroup(reg, recs)
		if err != nil {
			t.Fatal(err)
		}
		g.started = &events.TurnStarted{TurnID: "t"}
		return g
	}
	other := granted
	other.Grants = []events.StandingGrant{{Permission: "shell", Pattern: "go *"}}
	for _, tc := range []struct {
		name     string
		recorded *group
		replayed []events.Payload
		diffs    int
	}{
		{"an old log without the grant", recordedGroup(ask, started), []events.Payload{ask, granted, started}, 0},
		{"a log with the grant", recordedGroup(ask, granted, started), []events.Payload{ask, granted, started}, 0},
		{"a recorded grant the replay does not make", recordedGroup(ask, granted, started), []events.Payload{ask, started}, 1},
		{"a grant of other patterns", recordedGroup(ask, granted, started), []events.Payload{ask, other, started}, 1},
		{"an old log's start still compared", recordedGroup(ask, started), []events.Payload{ask, granted, events.ToolStarted{SessionID: "s", CallID: "c1", Tool: "write"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &comparer{g: tc.recorded}
			for _, p := range tc.replayed {
				if _, err := c.check(event(p)); err != nil {
					break
				}
			}
			if len(c.diffs) != tc.diffs {
				t.Fatalf("differences %+v, want %d", c.diffs, tc.diffs)
			}
		})
	}
}
