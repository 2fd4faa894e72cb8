package bundle

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/events"
)

// Reason codes of a bundle that does not verify (docs/formats.md, "Verifying a bundle"). The
// independent verifier (docs/verifier/zuno_verify.py) reports the same line for every bundle;
// both name the codes below.
const (
	ReasonBadLine          = "bad_line"
	ReasonBadHeader        = "bad_header"
	ReasonMisplaced        = "misplaced"
	ReasonMissingSeal      = "missing_seal"
	ReasonRevisionGap      = "revision_gap"
	ReasonChainAltered     = "chain_altered"
	ReasonUnchained        = "unchained"
	ReasonPositionOrder    = "position_order"
	ReasonHeaderMismatch   = "header_mismatch"
	ReasonAnchorMismatch   = "anchor_mismatch"
	ReasonSealDigest       = "seal_digest"
	ReasonSignatureInvalid = "signature_invalid"
	ReasonSignatureMissing = "signature_required"
	ReasonSignatureKey     = "signature_untrusted"
)

// Options say which signature a bundle must carry.
type Options struct {
	// TrustedKey, when set, is the only key a valid bundle may be signed with; it implies
	// RequireSignature.
	TrustedKey ed25519.PublicKey
	// RequireSignature refuses an unsigned bundle.
	RequireSignature bool
}

// Result is the verdict: the first bad line (1-based; 0 when valid) and why.
type Result struct {
	Valid bool `json:"valid"`
	Line  int  `json:"line"`
	// EventID, Stream and Revision name the event on that line, when it is one whose
	// members could be read.
	EventID  string  `json:"eventId,omitempty"`
	Stream   string  `json:"stream,omitempty"`
	Revision *uint64 `json:"revision,omitempty"`
	// Reason is "<code>: text".
	Reason string `json:"reason,omitempty"`
	// Events and Streams count what a valid bundle holds; Signed says it carried a signature
	// that verified, PublicKey its key.
	Events    int    `json:"events"`
	Streams   int    `json:"streams"`
	Signed    bool   `json:"signed"`
	PublicKey string `json:"publicKey,omitempty"`
}

// MarshalJSON writes the verdict as docs/formats.md shows it, the same members the
// independent verifier prints: a failure's line, event and reason, or a valid bundle's counts.
func (r Result) MarshalJSON() ([]byte, error) {
	if !r.Valid {
		return json.Marshal(struct {
			Valid    bool    `json:"valid"`
			Line     int     `json:"line"`
			EventID  string  `json:"eventId,omitempty"`
			Stream   string  `json:"stream,omitempty"`
			Revision *uint64 `json:"revision,omitempty"`
			Reason   string  `json:"reason"`
		}{false, r.Line, r.EventID, r.Stream, r.Revision, r.Reason})
	}
	return json.Marshal(struct {
		Valid     bool   `json:"valid"`
		Line      int    `json:"line"`
		Events    int    `json:"events"`
		Streams   int    `json:"streams"`
		Signed    bool   `json:"signed"`
		PublicKey string `json:"publicKey,omitempty"`
	}{true, 0, r.Events, r.Streams, r.Signed, r.PublicKey})
}

// Code is the stable code of the reason.
func (r Result) Code() string {
	code, _, _ := strings.Cut(r.Reason, ":")
	return code
}

// CodeBundleInvalid is the error `zuno verify --bundle` ends with when the bundle does not
// verify (exit status 1); the verdict names the first bad line.
const CodeBundleInvalid = "bundle_invalid"

// InvalidError says a bundle did not verify; the verdict was printed.
type InvalidError struct{ Result Result }

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s: line %d: %s; the bundle was changed after it was exported, or the log it was exported from had been: ask its sender for the original, and run `zuno verify` on the log",
		CodeBundleInvalid, e.Result.Line, e.Result.Reason)
}

// Code returns the stable code.
func (e *InvalidError) Code() string { return CodeBundleInvalid }

// verifier holds the state of one pass over a bundle, line by line.
type verifier struct {
	opts    Options
	header  *Header
	streams map[string]*streamState
	order   []string
	events  int
	lastPos *uint64
	anchor  bool
}

type streamState struct {
	next  uint64
	prev  string   // the link the next event chains to
	links []string // the computed link at each revision
}

// failure is a verdict at one line.
type failure struct {
	line int // 0: the line being read
	code string
	text string
	ev   *EventLine
}

// Verify checks a bundle's bytes in file order and stops at the first failure.
func Verify(data []byte, opts Options) Result {
	if opts.TrustedKey != nil {
		opts.RequireSignature = true
	}
	v := &verifier{opts: opts, streams: map[string]*streamState{}}
	res, f := v.run(data)
	if f == nil {
		return res
	}
	out := Result{Line: f.line, Reason: f.code + ": " + f.text}
	if f.ev != nil {
		out.EventID, out.Stream = f.ev.EventID, f.ev.Stream
		rev := f.ev.Revision
		out.Revision = &rev
	}
	return out
}

func (v *verifier) run(data []byte) (Result, *failure) {
	lines, rest := splitLines(data)
	offset := 0
	for i, line := range lines {
		n := i + 1
		var res *Result
		var f *failure
		if i == 0 {
			f = v.headerLine(line)
		} else {
			res, f = v.line(line, data[:offset])
		}
		if f != nil {
			if f.line == 0 {
				f.line = n
			}
			return Result{}, f
		}
		offset += len(line) + 1
		if res != nil {
			// The seal verified: it must be the last byte of the file.
			if offset != len(data) {
				return Result{}, &failure{line: n + 1, code: ReasonMisplaced, text: "something follows the seal line"}
			}
			return *res, nil
		}
	}
	if len(rest) > 0 {
		return Result{}, &failure{line: len(lines) + 1, code: ReasonBadLine, text: "the last line does not end with a newline"}
	}
	return Result{}, &failure{line: len(lines) + 1, code: ReasonMissingSeal, text: "the bundle ends without a seal line"}
}

// splitLines cuts data at each newline; rest is what follows the last one.
func splitLines(data []byte) (lines [][]byte, rest []byte) {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return lines, data
		}
		lines = append(lines, data[:i])
		data = data[i+1:]
	}
}

func (v *verifier) headerLine(line []byte) *failure {
	obj, f := object(line)
	if f != nil {
		return &failure{code: ReasonBadHeader, text: f.text}
	}
	var h Header
	format, okF := str(obj, "format")
	version, okV := uintMember(obj, "version")
	sessions, okS := strList(obj, "sessions")
	_, okC := str(obj, "createdAt")
	genesis, okG := uint64(0), true
	if _, present := obj["chainGenesis"]; present {
		genesis, okG = uintMember(obj, "chainGenesis")
	}
	streams, okT := summaries(obj)
	if !okF || format != Format || !okV || version != Version || !okS || !okC || !okG || !okT {
		return &failure{code: ReasonBadHeader, text: fmt.Sprintf("the first line is not a %s version %d header", Format, Version)}
	}
	h.Format, h.Version, h.Sessions, h.Streams, h.ChainGenesis = format, Version, sessions, streams, genesis
	v.header = &h
	return nil
}

func (v *verifier) line(line, before []byte) (*Result, *failure) {
	obj, f := object(line)
	if f != nil {
		return nil, f
	}
	kind, _ := str(obj, "kind")
	switch kind {
	case "event":
		if v.anchor {
			return nil, &failure{code: ReasonMisplaced, text: "an event after the anchor line"}
		}
		return nil, v.event(obj)
	case "anchor":
		if v.anchor {
			return nil, &failure{code: ReasonMisplaced, text: "a second anchor line"}
		}
		v.anchor = true
		file, ok := str(obj, "file")
		if !ok {
			return nil, &failure{code: ReasonBadLine, text: "the anchor line has no string member file"}
		}
		if f := v.headerMatches(); f != nil {
			return nil, f
		}
		return nil, v.anchorCovers(file)
	case "seal":
		return v.seal(obj, before)
	}
	return nil, &failure{code: ReasonBadLine, text: `not an "event", "anchor" or "seal" line`}
}

func (v *verifier) event(obj map[string]json.RawMessage) *failure {
	var ev EventLine
	var ok [7]bool
	ev.Position, ok[0] = uintMember(obj, "position")
	ev.Stream, ok[1] = str(obj, "stream")
	ev.Revision, ok[2] = uintMember(obj, "revision")
	ev.EventID, ok[3] = str(obj, "eventId")
	ev.Type, ok[4] = str(obj, "type")
	ev.Data, ok[5] = str(obj, "data")
	ev.Metadata, ok[6] = str(obj, "metadata")
	for _, o := range ok {
		if !o {
			return &failure{code: ReasonBadLine, text: "an event line needs integer position and revision, and string stream, eventId, type, data and metadata"}
		}
	}
	st := v.streams[ev.Stream]
	if st == nil {
		st = &streamState{}
		v.streams[ev.Stream] = st
		v.order = append(v.order, ev.Stream)
	}
	if ev.Revision != st.next {
		return &failure{code: ReasonRevisionGap, text: fmt.Sprintf("revision %d of %s, where revision %d comes next", ev.Revision, ev.Stream, st.next), ev: &ev}
	}
	body, hash, hashed := splitHash(ev.Metadata)
	digest := events.EncodedBodyDigest(ev.Stream, events.Event{ID: ev.EventID, Type: ev.Type, Data: []byte(ev.Data)}, []byte(body))
	link := events.Link(st.prev, ev.Revision, digest)
	switch {
	case !hashed && ev.Position > v.header.ChainGenesis:
		return &failure{code: ReasonUnchained, text: fmt.Sprintf("the metadata ends without a hash member, but the event is after the chain's genesis (position %d)", v.header.ChainGenesis), ev: &ev}
	case !hashed:
		st.prev = "" // older than the chain: the next hashed event starts afresh
	case hash != link:
		return &failure{code: ReasonChainAltered, text: "the hash does not match the event's content and its predecessor", ev: &ev}
	default:
		st.prev = link
	}
	if v.lastPos != nil && ev.Position <= *v.lastPos {
		return &failure{code: ReasonPositionOrder, text: fmt.Sprintf("position %d is not after the previous event's %d", ev.Position, *v.lastPos), ev: &ev}
	}
	pos := ev.Position
	v.lastPos = &pos
	st.next++
	st.links = append(st.links, link)
	v.events++
	return nil
}

// hashMember is how the metadata string ends when it carries a hash (events.SealPrepared):
// this prefix, 64 lowercase hex digits, and `"}`.
const hashMember = `,"hash":"`

// splitHash returns the metadata the chain hashed (without its final hash member) and the hash.
func splitHash(md string) (body, hash string, ok bool) {
	const tail = len(hashMember) + 64 + len(`"}`)
	if len(md) < tail || md[len(md)-tail:len(md)-tail+len(hashMember)] != hashMember || md[len(md)-2:] != `"}` {
		return md, "", false
	}
	hash = md[len(md)-tail+len(hashMember) : len(md)-2]
	for i := range len(hash) {
		if c := hash[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return md, "", false
		}
	}
	return md[:len(md)-tail] + "}", hash, true
}

// headerMatches holds the header's streams to the events read: the same streams, counts and
// heads. A mismatch is a fault of the header, line 1.
func (v *verifier) headerMatches() *failure {
	bad := func(text string) *failure { return &failure{line: 1, code: ReasonHeaderMismatch, text: text} }
	seen := map[string]bool{}
	for _, s := range v.header.Streams {
		if seen[s.Stream] {
			return bad(fmt.Sprintf("the header names stream %s twice", s.Stream))
		}
		seen[s.Stream] = true
		st := v.streams[s.Stream]
		switch {
		case st == nil:
			return bad(fmt.Sprintf("the header names stream %s, which has no events in the bundle", s.Stream))
		case st.next != s.Events:
			return bad(fmt.Sprintf("the header counts %d events of %s, the bundle holds %d", s.Events, s.Stream, st.next))
		case st.links[len(st.links)-1] != s.Head:
			return bad(fmt.Sprintf("the header's head of %s is not its last event's hash", s.Stream))
		}
	}
	for _, s := range v.order {
		if !seen[s] {
			return bad(fmt.Sprintf("stream %s has events in the bundle but is not in the header", s))
		}
	}
	return nil
}

// anchorCovers checks that every head the anchor file records of a bundled stream is the
// bundle's event at that revision.
func (v *verifier) anchorCovers(file string) *failure {
	bad := func(text string) *failure { return &failure{code: ReasonAnchorMismatch, text: text} }
	obj, f := object([]byte(file))
	if f != nil {
		return bad("the anchor file is not a JSON object")
	}
	version, _ := str(obj, "version")
	raw := obj["heads"]
	var heads []json.RawMessage
	if version != "zuno.anchor.1" && version != "zuno.anchor.2" || len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &heads) != nil {
		return bad("the anchor file is not a zuno.anchor.1 or zuno.anchor.2 file with a heads array")
	}
	for _, raw := range heads {
		h, f := object(raw)
		if f != nil {
			return bad("an anchored head is not an object")
		}
		stream, ok1 := str(h, "stream")
		rev, ok2 := uintMember(h, "revision")
		hash, ok3 := str(h, "hash")
		if !ok1 || !ok2 || !ok3 {
			return bad("an anchored head needs string stream and hash and integer revision")
		}
		st := v.streams[stream]
		switch {
		case st == nil:
		case rev >= st.next:
			return bad(fmt.Sprintf("the anchor records %s at revision %d, beyond the bundle's last", stream, rev))
		case st.links[rev] != hash:
			return bad(fmt.Sprintf("the anchor's head of %s at revision %d is not the bundle's event there", stream, rev))
		}
	}
	return nil
}

func (v *verifier) seal(obj map[string]json.RawMessage, before []byte) (*Result, *failure) {
	digest, ok := str(obj, "sha256")
	sigRaw, present := obj["signature"]
	if !ok || !present {
		return nil, &failure{code: ReasonBadLine, text: "the seal needs a string sha256 and a signature (null or an object)"}
	}
	var sig *parsedSignature
	if string(sigRaw) != "null" {
		s, f := signature(sigRaw)
		if f != nil {
			return nil, f
		}
		sig = s
	}
	if !v.anchor {
		if f := v.headerMatches(); f != nil {
			return nil, f
		}
	}
	sum := sha256.Sum256(before)
	if digest != hex.EncodeToString(sum[:]) {
		return nil, &failure{code: ReasonSealDigest, text: "the SHA-256 of the lines before the seal is not the sealed one"}
	}
	res := &Result{Valid: true, Events: v.events, Streams: len(v.order)}
	switch {
	case sig == nil && v.opts.RequireSignature:
		return nil, &failure{code: ReasonSignatureMissing, text: "the bundle is not signed, and a signature is required"}
	case sig == nil:
	case v.opts.TrustedKey != nil && !bytes.Equal(sig.key, v.opts.TrustedKey):
		return nil, &failure{code: ReasonSignatureKey, text: "the bundle is signed with another key than the trusted one"}
	case !ed25519.Verify(sig.key, []byte(SignedPrefix+digest), sig.value):
		return nil, &failure{code: ReasonSignatureInvalid, text: "the signature does not verify with its public key"}
	default:
		res.Signed, res.PublicKey = true, base64.StdEncoding.EncodeToString(sig.key)
	}
	return res, nil
}

type parsedSignature struct {
	key   ed25519.PublicKey
	value []byte
}

func signature(raw json.RawMessage) (*parsedSignature, *failure) {
	bad := &failure{code: ReasonBadLine, text: `the seal's signature is not {"alg":"ed25519","publicKey":base64,"value":base64}`}
	obj, f := object(raw)
	if f != nil {
		return nil, bad
	}
	alg, ok1 := str(obj, "alg")
	pub, ok2 := str(obj, "publicKey")
	val, ok3 := str(obj, "value")
	key, ok4 := canonicalBase64(pub, ed25519.PublicKeySize)
	sig, ok5 := canonicalBase64(val, ed25519.SignatureSize)
	if !ok1 || alg != "ed25519" || !ok2 || !ok3 || !ok4 || !ok5 {
		return nil, bad
	}
	return &parsedSignature{key: key, value: sig}, nil
}

// canonicalBase64 decodes standard padded base64 of n bytes, refusing any other spelling of
// them (ignored newlines, stray padding bits), so that a changed character never decodes to
// the same bytes.
func canonicalBase64(s string, n int) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != n || base64.StdEncoding.EncodeToString(b) != s {
		return nil, false
	}
	return b, true
}

// object parses a line as one JSON object; the line must be UTF-8 (docs/formats.md).
func object(line []byte) (map[string]json.RawMessage, *failure) {
	if !utf8.Valid(line) {
		return nil, &failure{code: ReasonBadLine, text: "not UTF-8"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return nil, &failure{code: ReasonBadLine, text: "not a JSON object"}
	}
	return obj, nil
}

func str(obj map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := obj[key]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// integer is a JSON number written as a non-negative integer without sign, fraction or
// exponent.
var integer = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

func uintMember(obj map[string]json.RawMessage, key string) (uint64, bool) {
	raw, ok := obj[key]
	if !ok || !integer.Match(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil
}

func strList(obj map[string]json.RawMessage, key string) ([]string, bool) {
	raw, ok := obj[key]
	if !ok || len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var s string
		if len(it) == 0 || it[0] != '"' || json.Unmarshal(it, &s) != nil {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func summaries(obj map[string]json.RawMessage) ([]StreamSummary, bool) {
	raw, ok := obj["streams"]
	if !ok || len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, false
	}
	out := make([]StreamSummary, 0, len(items))
	for _, it := range items {
		o, f := object(it)
		if f != nil {
			return nil, false
		}
		var s StreamSummary
		var ok1, ok2, ok3 bool
		s.Stream, ok1 = str(o, "stream")
		s.Events, ok2 = uintMember(o, "events")
		s.Head, ok3 = str(o, "head")
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
