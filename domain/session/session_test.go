package session_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/events"
)

var registry = events.NewRegistry(events.AllPayloads()...)

var (
	create  = session.Create{SessionID: "ses_1", Title: "Fix the gap", Agent: "build"}
	created = []session.Command{create}
	withMsg = []session.Command{create, session.AppendUserMessage{SessionID: "ses_1", MessageID: "msg_1", Text: "hello"}}
)

// run decides and evolves each command, and checks that replaying the encoded events, decoded
// as a reader would, rebuilds the same state.
func run(t *testing.T, cmds []session.Command) (*session.State, []events.Payload, error) {
	t.Helper()
	var s, replayed session.State
	var last []events.Payload
	for i, c := range cmds {
		before := s
		out, err := session.Decide(&s, c)
		if !reflect.DeepEqual(before, s) {
			t.Fatalf("Decide changed the state")
		}
		if err != nil {
			if i < len(cmds)-1 {
				t.Fatalf("setup %+v: %v", c, err)
			}
			return &s, nil, err
		}
		for _, p := range out {
			if err := s.Evolve(p); err != nil {
				t.Fatal(err)
			}
			ev, err := events.Encode(events.DeriveID("c", i), p, events.Metadata{Actor: "user"})
			if err != nil {
				t.Fatal(err)
			}
			decoded, err := registry.Decode(events.Recorded{Event: ev})
			if err != nil {
				t.Fatal(err)
			}
			if err := replayed.Evolve(decoded); err != nil {
				t.Fatal(err)
			}
		}
		last = out
	}
	if !reflect.DeepEqual(s, replayed) {
		t.Errorf("replay differs:\n%+v\n%+v", replayed, s)
	}
	return &s, last, nil
}

func TestDecideErrors(t *testing.T) {
	long := strings.Repeat("a", domain.MaxTitleRunes+1)
	tests := []struct {
		name  string
		setup []session.Command
		cmd   session.Command
		code  string
		field string
	}{
		{"create twice", created, create, domain.CodeSessionExists, ""},
		{"create without id", nil, session.Create{Title: "T", Agent: "build"}, domain.CodeInvalidArgument, "session_id"},
		{"create without title", nil, session.Create{SessionID: "ses_1", Agent: "build"}, domain.CodeInvalidArgument, "title"},
		{"create with long title", nil, session.Create{SessionID: "ses_1", Title: long, Agent: "build"}, domain.CodeInvalidArgument, "title"},
		{"create without agent", nil, session.Create{SessionID: "ses_1", Title: "T"}, domain.CodeInvalidArgument, "agent"},
		{"create as own parent", nil, session.Create{SessionID: "ses_1", Title: "T", Agent: "build", ParentSessionID: "ses_1"}, domain.CodeInvalidArgument, "parent_session_id"},
		{"title unknown session", nil, session.SetTitle{SessionID: "ses_1", Title: "T"}, domain.CodeSessionNotFound, ""},
		{"empty title", created, session.SetTitle{SessionID: "ses_1", Title: "  "}, domain.CodeInvalidArgument, "title"},
		{"long title", created, session.SetTitle{SessionID: "ses_1", Title: long}, domain.CodeInvalidArgument, "title"},
		{"title other session", created, session.SetTitle{SessionID: "ses_2", Title: "T"}, domain.CodeInvalidArgument, "session_id"},
		{"message unknown session", nil, session.AppendUserMessage{SessionID: "ses_1", MessageID: "m", Text: "x"}, domain.CodeSessionNotFound, ""},
		{"message without id", created, session.AppendUserMessage{SessionID: "ses_1", Text: "x"}, domain.CodeInvalidArgument, "message_id"},
		{"message without text", created, session.AppendUserMessage{SessionID: "ses_1", MessageID: "m", Text: "\n"}, domain.CodeInvalidArgument, "text"},
		{"duplicate message", withMsg, session.AppendUserMessage{SessionID: "ses_1", MessageID: "msg_1", Text: "again"}, domain.CodeDuplicateMessage, "message_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out, err := run(t, append(append([]session.Command(nil), tt.setup...), tt.cmd))
			var de *domain.Error
			if !errors.As(err, &de) || de.Code() != tt.code {
				t.Fatalf("got %v %v, want code %s", out, err, tt.code)
			}
			if de.Field != tt.field || de.Fix == "" {
				t.Errorf("field %q fix %q, want field %q and a fix", de.Field, de.Fix, tt.field)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	child := session.Create{SessionID: "ses_2", Title: " Child ", Agent: "explore", ParentSessionID: "ses_1", Directory: "/repo"}
	s, out, err := run(t, []session.Command{child})
	if err != nil {
		t.Fatal(err)
	}
	want := events.SessionCreated{SessionID: "ses_2", Title: "Child", Agent: "explore", ParentSessionID: "ses_1", Directory: "/repo"}
	if !reflect.DeepEqual(out, []events.Payload{want}) {
		t.Errorf("events %+v", out)
	}
	if !s.Exists || s.Title != "Child" || s.ParentSessionID != "ses_1" || s.Directory != "/repo" {
		t.Errorf("state %+v", s)
	}

	s, out, err = run(t, append(withMsg,
		session.SetTitle{SessionID: "ses_1", Title: "Renamed"},
		session.AppendUserMessage{SessionID: "ses_1", MessageID: "msg_2", Text: " keep spacing "}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, []events.Payload{events.UserMessageAppended{SessionID: "ses_1", MessageID: "msg_2", Text: " keep spacing "}}) {
		t.Errorf("events %+v", out)
	}
	if s.Title != "Renamed" || s.MessageCount != 2 || !s.HasMessage("msg_1") || !s.HasMessage("msg_2") || s.HasMessage("msg_3") {
		t.Errorf("state %+v", s)
	}

	// Renaming to the current title decides nothing.
	_, out, err = run(t, append(created, session.SetTitle{SessionID: "ses_1", Title: "Fix the gap "}))
	if err != nil || len(out) != 0 {
		t.Errorf("same title: %v %v", out, err)
	}
}

func TestDecideNilState(t *testing.T) {
	out, err := session.Decide(nil, create)
	if err != nil || len(out) != 1 {
		t.Errorf("%v %v", out, err)
	}
	if _, err := session.Decide(nil, session.SetTitle{SessionID: "ses_1", Title: "T"}); !domain.HasCode(err, domain.CodeSessionNotFound) {
		t.Errorf("%v", err)
	}
}

// TestDecideFork: each sentence of `zuno session fork` that the aggregate decides.
func TestDecideFork(t *testing.T) {
	src := &session.State{}
	for _, p := range []events.Payload{
		events.SessionCreated{SessionID: "ses_src", Title: "Source", Agent: "plan", Directory: "/repo", ParentSessionID: "ses_root"},
		events.UserMessageAppended{SessionID: "ses_src", MessageID: "msg_1", Text: "hi"},
	} {
		if err := src.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	at := events.ForkSource{SessionID: "ses_src", Stream: "session-ses_src", Revision: 1, Position: 7, EventID: "e", Hash: "h"}
	exists := &session.State{Exists: true, SessionID: "ses_new"}
	cases := []struct {
		name      string
		state     *session.State
		fork      session.Fork
		wantCode  string
		wantTitle string
	}{
		{name: "a new session, the source's title marked as a fork", fork: session.Fork{SessionID: "ses_new", Source: src, At: at}, wantTitle: "Source (fork)"},
		{name: "--title names it", fork: session.Fork{SessionID: "ses_new", Title: "Try B", Source: src, At: at}, wantTitle: "Try B"},
		{name: "the new id is taken", state: exists, fork: session.Fork{SessionID: "ses_new", Source: src, At: at}, wantCode: domain.CodeSessionExists},
		{name: "the event is not in a session", fork: session.Fork{SessionID: "ses_new", Source: &session.State{}, At: at}, wantCode: domain.CodeInvalidArgument},
		{name: "a bad new id", fork: session.Fork{SessionID: "bad id", Source: src, At: at}, wantCode: domain.CodeInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := session.Decide(tc.state, tc.fork)
			if tc.wantCode != "" {
				if domain.CodeOf(err) != tc.wantCode {
					t.Fatalf("err %v, want %s", err, tc.wantCode)
				}
				return
			}
			if err != nil || len(out) != 1 {
				t.Fatalf("out %+v err %v", out, err)
			}
			f := out[0].(events.SessionForked)
			if f.SessionID != "ses_new" || f.Title != tc.wantTitle || f.Agent != "plan" || f.Directory != "/repo" || f.MessageCount != 1 || f.Source != at {
				t.Fatalf("forked %+v", f)
			}
			// Folded after the source's history, the fork is a root session of its own that
			// keeps the history's messages.
			s := *src
			if err := s.Evolve(f); err != nil {
				t.Fatal(err)
			}
			if s.SessionID != "ses_new" || s.ParentSessionID != "" || s.ForkedFrom != "ses_src" || !s.HasMessage("msg_1") || s.MessageCount != 1 {
				t.Fatalf("state after the fork %+v", s)
			}
		})
	}
}

// A prune is recorded once per mode (a delete after an archive, never an archive after a
// delete), refuses a bad mode or a session that does not exist, and a pruned session takes no
// new message; a fork of it is live.
func TestDecidePrune(t *testing.T) {
	archive := session.Prune{SessionID: "ses_1", Mode: events.PruneArchive, Reason: "done"}
	del := session.Prune{SessionID: "ses_1", Mode: events.PruneDelete}
	for _, c := range []struct {
		name   string
		cmds   []session.Command
		events int
		pruned string
		code   string
	}{
		{"archive", []session.Command{create, archive}, 1, "archive", ""},
		{"archive again", []session.Command{create, archive, archive}, 0, "archive", ""},
		{"delete after archive", []session.Command{create, archive, del}, 1, "delete", ""},
		{"archive after delete", []session.Command{create, del, archive}, 0, "delete", ""},
		{"no session", []session.Command{archive}, 0, "", domain.CodeSessionNotFound},
		{"bad mode", []session.Command{create, session.Prune{SessionID: "ses_1", Mode: "shred"}}, 0, "", domain.CodeInvalidArgument},
		{"message after prune", []session.Command{create, archive,
			session.AppendUserMessage{SessionID: "ses_1", MessageID: "msg_2", Text: "more"}}, 0, "archive", session.CodeSessionPruned},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, out, err := run(t, c.cmds)
			if domain.CodeOf(err) != c.code || len(out) != c.events || s.Pruned != c.pruned {
				t.Fatalf("events %v, pruned %q, err %v", out, s.Pruned, err)
			}
		})
	}
	var s session.State
	for _, p := range []events.Payload{events.SessionCreated{SessionID: "ses_1", Title: "t", Agent: "build"},
		events.SessionPruned{SessionID: "ses_1", Mode: events.PruneArchive},
		events.SessionForked{SessionID: "ses_2", Title: "t", Agent: "build", Source: events.ForkSource{SessionID: "ses_1"}}} {
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	if s.Pruned != "" {
		t.Fatalf("the fork of a pruned session is pruned: %+v", s)
	}
}
