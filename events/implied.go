package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
)

// Implied members (docs/storage.md, "Bytes per step"). The payloads an agent step appends
// begin with the session's id and, most of them, the turn's id. Both are named by the
// envelope already: the session by the stream (session-<sessionId>), the turn by the command
// id (a turn's id is TurnIDOf its command id). So where they equal those values they are left
// out of the stored data, about 90 bytes of every such event, and a reader gets them back
// from the envelope when it decodes. A value that differs (a turn recovered by a later
// command, an event in another stream) is stored as it is.
//
// Only leading members are left out, and only of the payload types that opt in
// (impliesLeading): Go writes a struct's fields in order and always writes a field without
// omitempty, so a missing leading "sessionId" can only mean implied, and the stored JSON stays
// exactly the bytes appended (the hash chain covers them as they are). Events recorded before
// this build keep both members and decode as they always did.
//
// session.verification.receipt.1 leaves out its leading sessionId alone (impliesSession):
// its turnId is omitempty (a receipt outside a turn has none), so a missing one means empty,
// and it is stored whenever it is not.

// impliesLeading marks the payload types whose leading sessionId and turnId members are
// left out where the envelope implies them. Both fields are declared first, in that order,
// without omitempty.
type impliesLeading interface{ impliesLeading() }

func (PromptAssembled) impliesLeading() {}
func (ProviderRequest) impliesLeading() {}
func (ToolBlocked) impliesLeading()     {}
func (ToolStarted) impliesLeading()     {}
func (ToolSettled) impliesLeading()     {}

// impliesSession marks the payload types whose leading sessionId alone is left out where the
// stream implies it; their turn id, if any, is always stored (it is omitempty, so its absence
// already means empty). The field is declared first, without omitempty.
type impliesSession interface{ impliesSession() }

func (VerificationReceipt) impliesSession() {}

// TurnIDOf is the id of the turn a command runs: derived from its command id, so a
// re-delivered command drives the same turn.
func TurnIDOf(commandID string) string {
	sum := sha256.Sum256([]byte("turn\n" + commandID))
	return "turn_" + hex.EncodeToString(sum[:16])
}

// SessionOfStream is the session a session stream (session-<sessionId>) belongs to.
func SessionOfStream(stream string) (string, bool) {
	id, ok := strings.CutPrefix(stream, "session-")
	if !ok || id == "" {
		return "", false
	}
	return id, true
}

// EncodeIn encodes p as an event of stream (Encode), leaving out the leading members the
// stream and the metadata's command id imply.
func EncodeIn(stream, id string, p Payload, md Metadata) (Event, error) {
	ev, err := Encode(id, p, md)
	if err != nil {
		return ev, err
	}
	switch p.(type) {
	case impliesLeading:
		ev.Data = leaveOutImplied(ev.Data, stream, md.CommandID)
	case impliesSession:
		if session, ok := SessionOfStream(stream); ok {
			ev.Data, _ = dropLeading(ev.Data, "sessionId", session)
		}
	}
	return ev, nil
}

// leaveOutImplied drops the leading "sessionId" member when it names stream's session, and
// then the "turnId" member when it is the command's turn. turnId is left out only after
// sessionId: a reader fills it in only where the session was implied.
func leaveOutImplied(data []byte, stream, commandID string) []byte {
	session, ok := SessionOfStream(stream)
	if !ok {
		return data
	}
	out, dropped := dropLeading(data, "sessionId", session)
	if !dropped {
		return data
	}
	out, _ = dropLeading(out, "turnId", TurnIDOf(commandID))
	return out
}

// dropLeading removes the object's first member when it is key with the string value.
func dropLeading(data []byte, key, value string) ([]byte, bool) {
	v, _ := json.Marshal(value) // the escaping encoding/json gave the member
	prefix := append(append([]byte(`{"`+key+`":`), v...), ',')
	if !bytes.HasPrefix(data, prefix) {
		return data, false
	}
	out := data[len(prefix)-1:] // data is Encode's own buffer: the member's last byte becomes the brace
	out[0] = '{'
	return out, true
}

// RestoreImplied returns rec's data with the members left out as implied put back, for a
// comparison of a log recorded before this build with one recorded by it (zuno replay
// --verify); member order is not kept.
func RestoreImplied(rec Recorded, p Payload) json.RawMessage {
	_, both := p.(impliesLeading)
	_, sessionOnly := p.(impliesSession)
	if !both && !sessionOnly || !bytes.HasPrefix(rec.Data, []byte("{")) ||
		bytes.HasPrefix(rec.Data, []byte(`{"sessionId":`)) || sessionOnly && hasMember(rec.Data, "sessionId") {
		return rec.Data
	}
	session, ok := SessionOfStream(rec.Stream)
	if !ok {
		return rec.Data
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for _, m := range [][2]string{{"sessionId", session}, {"turnId", TurnIDOf(rec.Metadata.CommandID)}} {
		if m[0] == "turnId" && (sessionOnly || bytes.HasPrefix(rec.Data, []byte(`{"turnId":`))) {
			continue
		}
		if _, has := reflect.TypeOf(p).FieldByName(fieldOf[m[0]]); !has {
			continue
		}
		v, _ := json.Marshal(m[1])
		buf.WriteString(`"` + m[0] + `":`)
		buf.Write(v)
		buf.WriteByte(',')
	}
	buf.Write(rec.Data[1:])
	return buf.Bytes()
}

// hasMember reports whether the JSON object data has a top-level member key: a verification
// receipt recorded before its session was implied holds it second, after its receiptId.
func hasMember(data []byte, key string) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil {
		return false
	}
	_, ok := members[key]
	return ok
}

// fieldOf names the Go field of each implied member.
var fieldOf = map[string]string{"sessionId": "SessionID", "turnId": "TurnID"}

// impliedFields are the indexes of a type's SessionID and TurnID fields (-1 for none), for
// filling them in as it is decoded.
type impliedFields struct{ session, turn int }

func impliedFieldsOf(t reflect.Type) (impliedFields, bool) {
	both := t.Implements(reflect.TypeFor[impliesLeading]())
	if !both && !t.Implements(reflect.TypeFor[impliesSession]()) {
		return impliedFields{}, false
	}
	f := impliedFields{session: -1, turn: -1}
	if sf, ok := t.FieldByName("SessionID"); ok && len(sf.Index) == 1 {
		f.session = sf.Index[0]
	}
	if sf, ok := t.FieldByName("TurnID"); ok && len(sf.Index) == 1 && both {
		f.turn = sf.Index[0]
	}
	return f, f.session >= 0
}

// unset stands for a member the data did not have: no id contains a NUL.
const unset = "\x00implied"

// preset marks v's implied fields unset before v is decoded.
func (f impliedFields) preset(v reflect.Value) {
	v.Field(f.session).SetString(unset)
	if f.turn >= 0 {
		v.Field(f.turn).SetString(unset)
	}
}

// fill gives the fields the data did not have their implied values: the stream's session,
// and the command's turn where the session was implied too. Elsewhere they stay empty, as
// decoding left them before. turnIDOf is TurnIDOf (the registry keeps its last answer).
func (f impliedFields) fill(v reflect.Value, rec Recorded, turnIDOf func(commandID string) string) {
	session := v.Field(f.session)
	implied := session.String() == unset
	if implied {
		id, _ := SessionOfStream(rec.Stream)
		session.SetString(id)
	}
	if f.turn < 0 {
		return
	}
	if turn := v.Field(f.turn); turn.String() == unset {
		if implied {
			turn.SetString(turnIDOf(rec.Metadata.CommandID))
		} else {
			turn.SetString("")
		}
	}
}
