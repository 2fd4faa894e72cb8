// Package notes is the notes aggregate: the logical documents one session's agent keeps
// (docs/tools.md, "history and notes"). Documents are named by logical paths that never
// reach the host's file system, live in the session's notes stream, and change only by an
// exact expected revision, within fixed limits.
package notes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Limits of one scope (seeds 000): documents, bytes per document, bytes in all.
const (
	MaxDocuments = 100
	MaxDocument  = 256 << 10
	MaxTotal     = 1 << 20
	// MaxName bounds a document's name in bytes.
	MaxName = 200
)

// Stable codes.
const (
	// CodeNotesLimit: the write would pass a limit of the scope; nothing was written.
	CodeNotesLimit = "notes_limit"
	// CodeNoteNotFound: no document has that name.
	CodeNoteNotFound = "note_not_found"
)

// Doc is one document.
type Doc struct {
	Name     string `json:"name"`
	Revision uint64 `json:"revision"`
	Content  string `json:"-"`
}

// State is the documents of one scope, folded from its stream.
type State struct {
	docs  map[string]*Doc
	total int
}

// Evolve folds one event of the notes stream.
func (s *State) Evolve(p events.Payload) error {
	e, ok := p.(events.NoteWritten)
	if !ok {
		return domain.UnexpectedEvent("notes", p)
	}
	if s.docs == nil {
		s.docs = map[string]*Doc{}
	}
	d := s.docs[e.Name]
	if d == nil {
		d = &Doc{Name: e.Name}
		s.docs[e.Name] = d
	}
	s.total -= len(d.Content)
	if e.Action == events.NoteAppend {
		d.Content += e.Content
	} else {
		d.Content = e.Content
	}
	s.total += len(d.Content)
	d.Revision = e.Revision
	return nil
}

// Write is an append_to_file or write_file call.
type Write struct {
	SessionID string `json:"sessionId"`
	Name      string `json:"name"`
	// Action is events.NoteAppend or events.NoteWrite.
	Action string `json:"action"`
	// ExpectedRevision is the document's current revision, 0 to create it.
	ExpectedRevision uint64 `json:"expectedRevision"`
	Content          string `json:"content"`
	CallID           string `json:"callId"`
}

// Decide returns the event of w, or a typed refusal.
func Decide(s *State, w Write) ([]events.Payload, error) {
	name, err := ParseName(w.Name)
	if err != nil {
		return nil, err
	}
	if w.Action != events.NoteAppend && w.Action != events.NoteWrite {
		return nil, domain.Invalid("action", fmt.Sprintf("%q is not a notes write", w.Action), "use append_to_file or write_file")
	}
	cur := s.Get(name)
	var rev uint64
	old := ""
	if cur != nil {
		rev, old = cur.Revision, cur.Content
	}
	if w.ExpectedRevision != rev {
		e := domain.StaleRevision("document "+name, w.ExpectedRevision, rev, "notes action=read_file")
		if cur == nil {
			e.Fix = "the document does not exist: create it with expected_revision 0"
		}
		return nil, e
	}
	content := w.Content
	if w.Action == events.NoteAppend {
		content = old + w.Content
	}
	if err := s.checkLimits(cur == nil, len(old), len(content)); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(content))
	return []events.Payload{events.NoteWritten{SessionID: w.SessionID, Name: name, Action: w.Action, Revision: rev + 1,
		Content: w.Content, Bytes: len(content), SHA256: hex.EncodeToString(sum[:]), CallID: w.CallID}}, nil
}

func (s *State) checkLimits(creates bool, oldBytes, newBytes int) error {
	limit := func(msg string) error {
		return domain.NewError(CodeNotesLimit, msg, fmt.Sprintf("notes keep at most %d documents of %d KiB each, %d KiB in all: "+
			"shorten or replace (write_file) an existing document instead", MaxDocuments, MaxDocument>>10, MaxTotal>>10))
	}
	switch {
	case creates && len(s.docs) >= MaxDocuments:
		return limit(fmt.Sprintf("this scope already holds %d documents", len(s.docs)))
	case newBytes > MaxDocument:
		return limit(fmt.Sprintf("the document would be %d bytes", newBytes))
	case s.total-oldBytes+newBytes > MaxTotal:
		return limit(fmt.Sprintf("the documents would hold %d bytes in all", s.total-oldBytes+newBytes))
	}
	return nil
}

// Get returns the document named name, nil when there is none.
func (s *State) Get(name string) *Doc {
	if s == nil || s.docs == nil {
		return nil
	}
	return s.docs[name]
}

// List returns the documents whose names start with prefix, by name.
func (s *State) List(prefix string) []Doc {
	var out []Doc
	if s == nil {
		return out
	}
	for name, d := range s.docs {
		if strings.HasPrefix(name, prefix) {
			out = append(out, *d)
		}
	}
	slices.SortFunc(out, func(a, b Doc) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Total is the bytes the documents hold.
func (s *State) Total() int { return s.total }

// ParseName checks a document name and returns it. A name is a logical path: 1 to MaxName
// bytes of segments joined by "/", each segment of ASCII letters, digits, '.', '_' and '-',
// none empty, "." or "..". It never names a host path: no leading '/', no '\', no drive, no
// NUL, nothing but those characters.
func ParseName(name string) (string, error) {
	bad := func(msg string) error {
		return domain.Invalid("name", fmt.Sprintf("%q %s", name, msg),
			`name a note by a logical path such as "plans/api.md": segments of letters, digits, '.', '_' and '-' joined by '/'`)
	}
	if name == "" || len(name) > MaxName {
		return "", bad(fmt.Sprintf("must be 1 to %d bytes", MaxName))
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", bad("has an empty, '.' or '..' segment")
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				return "", bad(fmt.Sprintf("holds %q, which a note name may not", string(rune(c))))
			}
		}
	}
	return name, nil
}

// ParsePrefix checks a list or search prefix: empty (every document) or a name's start, which
// ParseName would accept once completed (a trailing '/' allowed).
func ParsePrefix(prefix string) (string, error) {
	if prefix == "" {
		return "", nil
	}
	if _, err := ParseName(strings.TrimSuffix(prefix, "/")); err != nil {
		return "", err
	}
	return prefix, nil
}
