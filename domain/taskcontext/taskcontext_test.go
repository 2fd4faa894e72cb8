package taskcontext_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	tc "github.com/zuno-run/zuno/domain/taskcontext"
	"github.com/zuno-run/zuno/events"
)

// messages is a session's log: two user messages, a steering input (user), a job's report, a
// peer session's message and a compaction marker-like host message of unknown kind.
var messages = map[string]tc.Message{
	"msg_fix":    {ID: "msg_fix", Kind: tc.MessageUser, Summary: "Fix the login bug"},
	"msg_quiet":  {ID: "msg_quiet", Kind: tc.MessageUser, Summary: "Do not announce it"},
	"msg_steer":  {ID: "msg_steer", Kind: tc.MessageUser, Summary: "also check the logout path"},
	"msg_report": {ID: "msg_report", Kind: tc.MessageTaskReport, Summary: "child: done"},
	"msg_peer":   {ID: "msg_peer", Kind: tc.MessagePeer, Summary: "peer: ship it"},
	"msg_marker": {ID: "msg_marker", Kind: "compaction_marker", Summary: "summary of earlier steps"},
}

func rev(n uint64) *uint64 { return &n }

// fold decides each update in turn on one state and returns it with the last error.
func fold(t *testing.T, us ...tc.Update) (*tc.State, error) {
	t.Helper()
	s := &tc.State{}
	for i, u := range us {
		if u.SessionID == "" {
			u.SessionID = "ses_1"
		}
		u.Messages = messages
		ps, err := tc.Decide(s, u)
		if err != nil {
			if i < len(us)-1 {
				t.Fatalf("update %d refused: %v", i, err)
			}
			return s, err
		}
		for _, p := range ps {
			if err := s.Evolve(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s, nil
}

var create = tc.Update{Action: tc.ActionUpdate, Objective: "Fix the login bug", TaskKind: tc.KindDelivery,
	SourceMessageIDs: []string{"msg_fix"}, Constraints: []string{"keep the public API"},
	Checks: []tc.CheckInput{{ID: "tests", Kind: tc.CheckDelivery, Title: "login tests pass"},
		{ID: "quiet", Kind: tc.CheckSafety, Title: "nothing was announced"}}}

// TestSeedSentences holds the task context to the sentences of the seeds that define it
// (docs/task-context.md), one row each.
func TestSeedSentences(t *testing.T) {
	tests := []struct {
		seed    string
		updates []tc.Update
		code    string // the last update's refusal, "" when it must pass
		check   func(t *testing.T, s *tc.State)
	}{
		{seed: "creating needs objective, task_kind and source_message_ids (no objective)",
			updates: []tc.Update{{Action: tc.ActionUpdate, TaskKind: tc.KindDelivery, SourceMessageIDs: []string{"msg_fix"}}},
			code:    domain.CodeInvalidArgument},
		{seed: "creating needs a task_kind of delivery|inspection",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "x", TaskKind: "review", SourceMessageIDs: []string{"msg_fix"}}},
			code:    domain.CodeInvalidArgument},
		{seed: "creating needs source_message_ids",
			updates: []tc.Update{{Action: tc.ActionReplace, Objective: "x", TaskKind: tc.KindInspection}},
			code:    tc.CodeSourceRequired},
		{seed: "background reports are never an authorising source",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "x", TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_report"}}},
			code:    tc.CodeSourceNotUser},
		{seed: "compaction markers are never an authorising source",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "x", TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_marker"}}},
			code:    tc.CodeSourceNotUser},
		{seed: "peer context is not user authorisation",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "x", TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_peer"}}},
			code:    tc.CodeSourceNotUser},
		{seed: "a source must be a message of this session",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "x", TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_other"}}},
			code:    tc.CodeSourceNotUser},
		{seed: "a steering input is the user's own and may authorise",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "x", TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_steer"}}},
			check: func(t *testing.T, s *tc.State) {
				if got := s.Current().Sources[0]; got.Summary != "also check the logout path" {
					t.Fatalf("source summary is the host's: %+v", got)
				}
			}},
		{seed: "update by revision: omitted fields kept, constraints merged; 'no announcement' never erases the fix objective",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), SourceMessageIDs: []string{"msg_quiet"},
				Constraints: []string{"do not announce the fix"}}},
			check: func(t *testing.T, s *tc.State) {
				c := s.Current()
				if c.Objective != "Fix the login bug" || c.TaskKind != tc.KindDelivery || len(c.Checks) != 2 {
					t.Fatalf("the update lost what it omitted: %+v", c)
				}
				if strings.Join(c.Constraints, "|") != "keep the public API|do not announce the fix" {
					t.Fatalf("constraints not merged: %q", c.Constraints)
				}
				if len(c.Sources) != 2 {
					t.Fatalf("sources not merged: %+v", c.Sources)
				}
			}},
		{seed: "update needs the current revision",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, Constraints: []string{"x"}}},
			code:    domain.CodeExpectedRevisionRequired},
		{seed: "a stale revision is refused",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(0), Constraints: []string{"x"}}},
			code:    domain.CodeStaleRevision},
		{seed: "checks are merged: a new check joins, a report on one keeps its definition",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), Checks: []tc.CheckInput{
				{Kind: tc.CheckDelivery, Title: "logout still works"}, {ID: "tests", Status: tc.CheckPassed, Evidence: "[verification rcp_1]"}}}},
			check: func(t *testing.T, s *tc.State) {
				c := s.Current().Checks
				if len(c) != 3 || c[0].Status != tc.CheckPassed || c[0].Title != "login tests pass" || c[2].ID != "check-3" {
					t.Fatalf("checks not merged: %+v", c)
				}
			}},
		{seed: "ordinary updates cannot rewrite check definitions",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), Checks: []tc.CheckInput{{ID: "tests", Title: "some tests pass"}}}},
			code:    tc.CodeCheckDefinitionLocked},
		{seed: "revise_checks: true needs a user source",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), ReviseChecks: true,
				Checks: []tc.CheckInput{{ID: "tests", Title: "all tests pass"}}}},
			code: tc.CodeSourceRequired},
		{seed: "revise_checks: a report is not a user source",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), ReviseChecks: true, SourceMessageIDs: []string{"msg_report"},
				Checks: []tc.CheckInput{{ID: "tests", Title: "all tests pass"}}}},
			code: tc.CodeSourceNotUser},
		{seed: "revise_checks resets the revised checks to pending with their evidence cleared",
			updates: []tc.Update{create,
				{Action: tc.ActionUpdate, ExpectedRevision: rev(1), Checks: []tc.CheckInput{{ID: "tests", Status: tc.CheckPassed, Evidence: "go test ok"},
					{ID: "quiet", Status: tc.CheckPassed, Evidence: "no post"}}},
				{Action: tc.ActionUpdate, ExpectedRevision: rev(2), ReviseChecks: true, SourceMessageIDs: []string{"msg_steer"},
					Checks: []tc.CheckInput{{ID: "tests", Title: "login and logout tests pass"}}}},
			check: func(t *testing.T, s *tc.State) {
				c := s.Current().Checks
				if c[0].Title != "login and logout tests pass" || c[0].Status != tc.CheckPending || c[0].Evidence != "" {
					t.Fatalf("revised check not reset: %+v", c[0])
				}
				if c[1].Status != tc.CheckPassed || c[1].Evidence != "no post" {
					t.Fatalf("an unrevised check changed: %+v", c[1])
				}
			}},
		{seed: "a delivery task is not complete on negative safety checks alone",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "Fix it", TaskKind: tc.KindDelivery, SourceMessageIDs: []string{"msg_fix"},
				Checks: []tc.CheckInput{{ID: "quiet", Kind: tc.CheckSafety, Title: "nothing announced"}}},
				{Action: tc.ActionUpdate, ExpectedRevision: rev(1), Status: tc.StatusCompleted,
					Checks: []tc.CheckInput{{ID: "quiet", Status: tc.CheckPassed, Evidence: "no post"}}}},
			code: tc.CodeTaskIncomplete},
		{seed: "an inspection task completes on its passed checks",
			updates: []tc.Update{{Action: tc.ActionUpdate, Objective: "Audit it", TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_fix"},
				Checks: []tc.CheckInput{{ID: "ro", Kind: tc.CheckSafety, Title: "nothing edited"}}},
				{Action: tc.ActionUpdate, ExpectedRevision: rev(1), Status: tc.StatusCompleted,
					Checks: []tc.CheckInput{{ID: "ro", Status: tc.CheckPassed, Evidence: "git status clean"}}}},
			check: func(t *testing.T, s *tc.State) {
				if s.Current().Status != tc.StatusCompleted {
					t.Fatal("not completed")
				}
			}},
		{seed: "a delivery task with a pending check is not complete",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), Status: tc.StatusCompleted,
				Checks: []tc.CheckInput{{ID: "tests", Status: tc.CheckPassed, Evidence: "ok"}}}},
			code: tc.CodeTaskIncomplete},
		{seed: "a passed check needs evidence",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), Checks: []tc.CheckInput{{ID: "tests", Status: tc.CheckPassed}}}},
			code:    domain.CodeInvalidArgument},
		{seed: "a new objective by update needs a user source",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), Objective: "Announce the fix"}},
			code:    tc.CodeSourceRequired},
		{seed: "replace explicitly starts a new task",
			updates: []tc.Update{create, {Action: tc.ActionReplace, ExpectedRevision: rev(1), Objective: "Audit logout",
				TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_steer"}}},
			check: func(t *testing.T, s *tc.State) {
				c := s.Current()
				if c.TaskID != "task-2" || c.Objective != "Audit logout" || len(c.Constraints) != 0 || len(c.Checks) != 0 {
					t.Fatalf("replace kept the old task: %+v", c)
				}
			}},
		{seed: "an update cannot change the task kind",
			updates: []tc.Update{create, {Action: tc.ActionUpdate, ExpectedRevision: rev(1), TaskKind: tc.KindInspection}},
			code:    domain.CodeInvalidArgument},
		{seed: "a delegated child never rewrites the root's context",
			updates: []tc.Update{{Action: tc.ActionUpdate, Child: true, Objective: "x", TaskKind: tc.KindInspection, SourceMessageIDs: []string{"msg_fix"}}},
			code:    tc.CodeChildContext},
		{seed: "get is a read, not a command",
			updates: []tc.Update{{Action: tc.ActionGet}},
			code:    domain.CodeInvalidAction},
	}
	for _, tt := range tests {
		t.Run(tt.seed, func(t *testing.T) {
			s, err := fold(t, tt.updates...)
			if got := domain.CodeOf(err); got != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("code %q, want %q (%v)", got, tt.code, err)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// A refused update decides nothing and leaves the revision where it was.
func TestRefusalChangesNothing(t *testing.T) {
	s, err := fold(t, create, tc.Update{Action: tc.ActionUpdate, ExpectedRevision: rev(1), Checks: []tc.CheckInput{{ID: "tests", Title: "other"}}})
	if err == nil || s.Revision() != 1 || s.Current().Checks[0].Title != "login tests pass" {
		t.Fatalf("refusal changed the state: rev %d, %+v, %v", s.Revision(), s.Current(), err)
	}
}

func TestDescribe(t *testing.T) {
	s, _ := fold(t, create)
	log := []tc.Message{messages["msg_fix"], messages["msg_report"]}
	if v := tc.Describe(s, log); v.Stale || len(v.UserMessages) != 1 || v.Task.TaskID != "task-1" {
		t.Fatalf("view: %+v", v)
	}
	// A later user instruction makes the recorded context stale: the current one takes precedence.
	log = append(log, messages["msg_steer"])
	if v := tc.Describe(s, log); !v.Stale || len(v.UserMessages) != 2 {
		t.Fatalf("not stale after a newer user message: %+v", v)
	}
	if v := tc.Describe(&tc.State{}, nil); v.Task != nil || v.UserMessages == nil {
		t.Fatalf("empty view: %+v", v)
	}
}

func TestSummarize(t *testing.T) {
	if got := tc.Summarize("  fix\n\tthe   bug "); got != "fix the bug" {
		t.Fatalf("%q", got)
	}
	long := strings.Repeat("é", tc.MaxSummaryRunes+5)
	if got := tc.Summarize(long); !strings.HasSuffix(got, "… (+5 characters)") {
		t.Fatalf("%q", got)
	}
}

func TestEvolveRefusesOtherEvents(t *testing.T) {
	if err := (&tc.State{}).Evolve(events.SessionTitled{}); domain.CodeOf(err) != domain.CodeUnexpectedEvent {
		t.Fatal(err)
	}
}
