package events_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// Every payload, stored in a session stream by the command whose turn it names, decodes to
// itself; the step's events leave their sessionId and turnId out, the others keep them; and the
// data with them put back is what Encode writes, member for member.
func TestImpliedMembersRoundTrip(t *testing.T) {
	reg := events.NewRegistry(events.AllPayloads()...)
	const command = "cmd_1"
	md := events.Metadata{CommandID: command, Actor: "host"}
	leaving := map[string]bool{events.TypePromptAssembled: true, events.TypeProviderRequest: true,
		events.TypeToolBlocked: true, events.TypeToolStarted: true, events.TypeToolSettled: true,
		events.TypeVerificationReceipt: true}
	// A verification receipt's turn id is optional, so it is stored, implied session or not.
	keepsTurn := map[string]bool{events.TypeVerificationReceipt: true}
	for i, p := range samplePayloads() {
		p = withIDs(p, "ses_1", events.TurnIDOf(command))
		whole, err := events.Encode(events.DeriveID(command, i), p, md)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := events.EncodeIn("session-ses_1", whole.ID, p, md)
		if err != nil {
			t.Fatal(err)
		}
		rec := events.Recorded{Event: stored, Stream: "session-ses_1", Position: uint64(i + 1)}
		got, err := reg.Decode(rec)
		if err != nil {
			t.Fatalf("%T: %v", p, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("%T: decoded\n got %#v\nwant %#v", p, got, p)
		}
		left := bytes.Contains(whole.Data, []byte(`"sessionId":"ses_1"`)) && !bytes.Contains(stored.Data, []byte(`"sessionId":"ses_1"`))
		if left != leaving[p.EventType()] {
			t.Errorf("%s: sessionId left out %v, want %v: %s", p.EventType(), left, leaving[p.EventType()], stored.Data)
		}
		turnKept := bytes.Contains(stored.Data, []byte(`"turnId"`))
		if left && !keepsTurn[p.EventType()] && turnKept && !strings.Contains(string(whole.Data), `"turnId":""`) {
			t.Errorf("%s: turnId kept: %s", p.EventType(), stored.Data)
		}
		if keepsTurn[p.EventType()] && bytes.Contains(whole.Data, []byte(`"turnId"`)) && !turnKept {
			t.Errorf("%s: turnId left out: %s", p.EventType(), stored.Data)
		}
		if restored := events.RestoreImplied(rec, got); !bytes.Equal(restored, whole.Data) {
			t.Errorf("%s: restored\n got %s\nwant %s", p.EventType(), restored, whole.Data)
		}
	}
}

// What the envelope does not imply is stored as it is and read back as stored: another
// session's id, a turn another command ran (a recovered turn), an empty turn id, any stream
// that is not a session's. A log recorded before members were left out decodes unchanged.
func TestImpliedMembersOnlyWhereImplied(t *testing.T) {
	reg := events.NewRegistry(events.AllPayloads()...)
	md := events.Metadata{CommandID: "cmd_2", Actor: "host"}
	own := events.TurnIDOf("cmd_2")
	for _, c := range []struct {
		name, stream string
		p            events.ToolSettled
		want         string // the stored data's beginning
	}{
		{"both implied", "session-ses_1", events.ToolSettled{SessionID: "ses_1", TurnID: own, CallID: "c1"}, `{"requestId":"","callId":"c1"`},
		{"another command's turn", "session-ses_1", events.ToolSettled{SessionID: "ses_1", TurnID: "turn_old", CallID: "c1"}, `{"turnId":"turn_old",`},
		{"no turn", "session-ses_1", events.ToolSettled{SessionID: "ses_1", CallID: "c1"}, `{"turnId":"",`},
		{"another session", "session-ses_9", events.ToolSettled{SessionID: "ses_1", TurnID: own, CallID: "c1"}, `{"sessionId":"ses_1","turnId":"` + own + `",`},
		{"not a session stream", "work-ses_1", events.ToolSettled{SessionID: "ses_1", TurnID: own, CallID: "c1"}, `{"sessionId":"ses_1","turnId":"` + own + `",`},
		{"no session", "session-ses_1", events.ToolSettled{TurnID: own, CallID: "c1"}, `{"sessionId":"","turnId":"` + own + `",`},
	} {
		ev, err := events.EncodeIn(c.stream, "e1", c.p, md)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(ev.Data), c.want) {
			t.Errorf("%s: stored %s, want it to begin %s", c.name, ev.Data, c.want)
		}
		got, err := reg.Decode(events.Recorded{Event: ev, Stream: c.stream, Position: 1})
		if err != nil || !reflect.DeepEqual(got, c.p) {
			t.Errorf("%s: decoded %#v (%v), want %#v", c.name, got, err, c.p)
		}
	}
	old := events.Recorded{Stream: "session-ses_1", Position: 1, Event: events.Event{ID: "e1", Type: events.TypeToolSettled, Metadata: md,
		Data: json.RawMessage(`{"sessionId":"ses_1","turnId":"turn_x","requestId":"r","callId":"c1","tool":"shell","outcome":"completed","output":"ok"}`)}}
	got, err := reg.Decode(old)
	want := events.ToolSettled{SessionID: "ses_1", TurnID: "turn_x", RequestID: "r", CallID: "c1", Tool: "shell", Outcome: "completed", Output: "ok"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("an old event decoded %#v (%v), want %#v", got, err, want)
	}
	if restored := events.RestoreImplied(old, got); !bytes.Equal(restored, old.Data) {
		t.Errorf("an old event restored to %s", restored)
	}
}

// A verification receipt leaves out only its session, where the stream names it: its turn id is
// optional (omitempty), so a missing one is an empty one and a present one is stored as it is,
// whatever the command. A receipt recorded before (receiptId first, the session in it) decodes
// and restores unchanged.
func TestImpliedSessionOnly(t *testing.T) {
	reg := events.NewRegistry(events.AllPayloads()...)
	md := events.Metadata{CommandID: "cmd_3", Actor: "agent:build"}
	own := events.TurnIDOf("cmd_3")
	for _, c := range []struct {
		name, stream string
		p            events.VerificationReceipt
		want         string // the stored data's beginning
	}{
		{"session implied, own turn", "session-ses_1", events.VerificationReceipt{SessionID: "ses_1", ReceiptID: "rcp_1", TurnID: own}, `{"receiptId":"rcp_1","turnId":"` + own + `",`},
		{"session implied, no turn", "session-ses_1", events.VerificationReceipt{SessionID: "ses_1", ReceiptID: "rcp_1"}, `{"receiptId":"rcp_1","callId":`},
		{"session implied, another turn", "session-ses_1", events.VerificationReceipt{SessionID: "ses_1", ReceiptID: "rcp_1", TurnID: "turn_old"}, `{"receiptId":"rcp_1","turnId":"turn_old",`},
		{"another session", "session-ses_9", events.VerificationReceipt{SessionID: "ses_1", ReceiptID: "rcp_1", TurnID: own}, `{"sessionId":"ses_1","receiptId":"rcp_1",`},
		{"not a session stream", "work-ses_1", events.VerificationReceipt{SessionID: "ses_1", ReceiptID: "rcp_1"}, `{"sessionId":"ses_1","receiptId":"rcp_1",`},
		{"no session", "session-ses_1", events.VerificationReceipt{ReceiptID: "rcp_1", TurnID: own}, `{"sessionId":"","receiptId":"rcp_1",`},
	} {
		ev, err := events.EncodeIn(c.stream, "e1", c.p, md)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(ev.Data), c.want) {
			t.Errorf("%s: stored %s, want it to begin %s", c.name, ev.Data, c.want)
		}
		rec := events.Recorded{Event: ev, Stream: c.stream, Position: 1}
		got, err := reg.Decode(rec)
		if err != nil || !reflect.DeepEqual(got, c.p) {
			t.Errorf("%s: decoded %#v (%v), want %#v", c.name, got, err, c.p)
		}
		whole, _ := events.Encode("e1", c.p, md)
		if restored := events.RestoreImplied(rec, got); !bytes.Equal(restored, whole.Data) {
			t.Errorf("%s: restored %s, want %s", c.name, restored, whole.Data)
		}
	}
	old := events.Recorded{Stream: "session-ses_1", Position: 1, Event: events.Event{ID: "e1", Type: events.TypeVerificationReceipt, Metadata: md,
		Data: json.RawMessage(`{"receiptId":"rcp_1","sessionId":"ses_1","turnId":"turn_x","callId":"c1","command":"true","interpreter":"bash","policy":"pipefail","verdict":"passed","exitCode":0,"coverage":"last_statement","authority":"authoritative","reason":"r"}`)}}
	got, err := reg.Decode(old)
	zero := 0
	want := events.VerificationReceipt{ReceiptID: "rcp_1", SessionID: "ses_1", TurnID: "turn_x", CallID: "c1", Command: "true", Interpreter: "bash",
		Policy: "pipefail", Verdict: "passed", ExitCode: &zero, Coverage: "last_statement", Authority: "authoritative", Reason: "r"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("an old receipt decoded %#v (%v), want %#v", got, err, want)
	}
	if restored := events.RestoreImplied(old, got); !bytes.Equal(restored, old.Data) {
		t.Errorf("an old receipt restored to %s", restored)
	}
}

// A root session's events leave their correlation id out; CorrelationIn gives it back, and
// a recorded one (a child session's root, an old log) as recorded.
func TestCorrelationIn(t *testing.T) {
	for _, c := range []struct{ recorded, stream, want string }{
		{"", "session-ses_1", "ses_1"},
		{"ses_root", "session-ses_1", "ses_root"},
		{"ses_1", "session-ses_1", "ses_1"},
		{"", "work-ses_1", ""},
	} {
		if got := (events.Metadata{CorrelationID: c.recorded}).CorrelationIn(c.stream); got != c.want {
			t.Errorf("%q in %s: %q, want %q", c.recorded, c.stream, got, c.want)
		}
	}
}

// withIDs sets a payload's SessionID and TurnID fields, where it has them.
func withIDs(p events.Payload, session, turn string) events.Payload {
	v := reflect.New(reflect.TypeOf(p)).Elem()
	v.Set(reflect.ValueOf(p))
	if f := v.FieldByName("SessionID"); f.IsValid() {
		f.SetString(session)
	}
	if f := v.FieldByName("TurnID"); f.IsValid() {
		f.SetString(turn)
	}
	return v.Interface().(events.Payload)
}

// What decoding an event whose members are implied costs against one recorded whole (the
// baseline: logs before issue 13), for a provider request as a step appends it.
func BenchmarkDecodeImplied(b *testing.B) {
	reg := events.NewRegistry(events.AllPayloads()...)
	md := events.Metadata{CommandID: "cmd_bench", Actor: "agent:build"}
	p := events.ProviderRequest{SessionID: "ses_0123456789abcdef0123456789abcdef", TurnID: events.TurnIDOf("cmd_bench"),
		RequestID: "8359d165-d066-4ac5-ae7f-58f1efcbf570", Step: 3, Status: events.RequestStarted,
		PromptReceiptID: "8744f3f7-8c96-4247-bf96-f4eb1b712e67", Provider: "openai", Model: "gpt"}
	whole, _ := events.Encode("e", p, md)
	implied, _ := events.EncodeIn("session-"+p.SessionID, "e", p, md)
	for _, c := range []struct {
		name string
		ev   events.Event
	}{{"whole", whole}, {"implied", implied}} {
		rec := events.Recorded{Event: c.ev, Stream: "session-" + p.SessionID, Position: 1}
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := reg.Decode(rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
