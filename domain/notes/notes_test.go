package notes_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/notes"
	"github.com/zuno-run/zuno/events"
)

func apply(t *testing.T, s *notes.State, w notes.Write) error {
	t.Helper()
	ps, err := notes.Decide(s, w)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return nil
}

func TestDecideRevisions(t *testing.T) {
	s := &notes.State{}
	if err := apply(t, s, notes.Write{SessionID: "s", Name: "a.md", Action: events.NoteAppend, Content: "one"}); err != nil {
		t.Fatal(err) // an append with revision 0 creates
	}
	err := apply(t, s, notes.Write{SessionID: "s", Name: "a.md", Action: events.NoteWrite, ExpectedRevision: 0, Content: "x"})
	if de, ok := err.(*domain.Error); !ok || de.Code() != domain.CodeStaleRevision || de.Current != 1 || de.Expected != 0 {
		t.Fatalf("stale: %v", err)
	}
	if err := apply(t, s, notes.Write{SessionID: "s", Name: "a.md", Action: events.NoteAppend, ExpectedRevision: 1, Content: " two"}); err != nil {
		t.Fatal(err)
	}
	if d := s.Get("a.md"); d.Content != "one two" || d.Revision != 2 || s.Total() != 7 {
		t.Fatalf("%+v total %d", d, s.Total())
	}
	if err := apply(t, s, notes.Write{SessionID: "s", Name: "a.md", Action: events.NoteWrite, ExpectedRevision: 2, Content: "z"}); err != nil || s.Total() != 1 {
		t.Fatalf("replace: %v, total %d", err, s.Total())
	}
	if err := apply(t, s, notes.Write{SessionID: "s", Name: "a.md", Action: "delete", ExpectedRevision: 3}); domain.CodeOf(err) != domain.CodeInvalidArgument {
		t.Fatalf("unknown action: %v", err)
	}
}
