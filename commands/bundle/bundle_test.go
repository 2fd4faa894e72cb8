package bundle

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/events"
)

// chained seals n events per stream with the events package's own chain (events.Seal), as a
// store does, at interleaved positions; the first `unhashed` events of the first stream are
// written before the chain began (no hash), at or below the genesis.
func chained(t testing.TB, streams []string, n, unhashed int) []events.Recorded {
	t.Helper()
	var out []events.Recorded
	pos := uint64(0)
	prev := map[string]string{}
	for i := range n {
		for _, s := range streams {
			ev := events.Event{ID: fmt.Sprintf("%s-%d", s, i), Type: "session.user_message.appended.1",
				Data:     json.RawMessage(fmt.Sprintf(`{"text":"<%d> é \u2028"}`, i)),
				Metadata: events.Metadata{CommandID: fmt.Sprintf("c%d", i), Actor: "user", Time: time.Date(2026, 12, 3, 0, 0, i, 0, time.UTC)}}
			pos++
			if s == streams[0] && i < unhashed {
				out = append(out, events.Recorded{Event: ev, Stream: s, StreamRevision: uint64(i), Position: pos})
				continue
			}
			sealed, err := events.Seal(s, prev[s], uint64(i), []events.Event{ev})
			if err != nil {
				t.Fatal(err)
			}
			prev[s] = sealed[0].Metadata.Hash
			out = append(out, events.Recorded{Event: sealed[0], Stream: s, StreamRevision: uint64(i), Position: pos})
		}
	}
	return out
}

func write(t testing.TB, c Contents, key ed25519.PrivateKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, c, key); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var key = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))

func TestWrittenBundlesVerify(t *testing.T) {
	evs := chained(t, []string{"session-ses_a", "inbox-ses_a"}, 3, 0)
	anchor := fmt.Sprintf(`{"version":"zuno.anchor.2","heads":[{"stream":"session-ses_a","revision":1,"hash":%q},{"stream":"other","revision":9,"hash":"x"}]}`,
		evs[2].Metadata.Hash)
	for name, c := range map[string]Contents{
		"plain":            {Sessions: []string{"ses_a"}, Events: evs},
		"with an anchor":   {Sessions: []string{"ses_a"}, Events: evs, Anchor: []byte(anchor)},
		"empty":            {},
		"older than chain": {Sessions: []string{"ses_a"}, Events: chained(t, []string{"session-ses_a"}, 4, 2), Genesis: 2},
	} {
		t.Run(name, func(t *testing.T) {
			for _, k := range []ed25519.PrivateKey{nil, key} {
				data := write(t, c, k)
				res := Verify(data, Options{})
				if !res.Valid || res.Line != 0 || res.Events != len(c.Events) || res.Signed != (k != nil) {
					t.Fatalf("%+v\n%s", res, data)
				}
			}
		})
	}
}

// Each rule of docs/formats.md, "Verifying a bundle", broken on purpose, fails with its code
// at its line.
func TestBrokenBundlesNameTheirLine(t *testing.T) {
	evs := chained(t, []string{"session-ses_a", "inbox-ses_a"}, 3, 0)
	good := write(t, Contents{Sessions: []string{"ses_a"}, Events: evs}, key)
	lines := strings.SplitAfter(string(good), "\n")
	lines = lines[:len(lines)-1]
	// reseal rebuilds the seal over the lines before it, so only the rule under test breaks.
	reseal := func(body []string) []byte {
		var b bytes.Buffer
		for _, l := range body {
			b.WriteString(l)
		}
		s, _ := json.Marshal(seal(fmt.Sprintf("%x", sha(b.Bytes())), key))
		return append(b.Bytes(), append(s, '\n')...)
	}
	body := lines[:len(lines)-1]
	swap := func(i, j int) []string {
		c := append([]string(nil), body...)
		c[i], c[j] = c[j], c[i]
		return c
	}
	replaced := func(i int, old, new string) []string {
		c := append([]string(nil), body...)
		c[i] = strings.Replace(c[i], old, new, 1)
		return c
	}
	pre := chained(t, []string{"session-ses_a"}, 2, 2)
	cases := []struct {
		name string
		data []byte
		line int
		code string
	}{
		{"not JSON", reseal(replaced(2, "{", "[")), 3, ReasonBadLine},
		{"no header", reseal(body[1:]), 1, ReasonBadHeader},
		{"a revision skipped", reseal(append(append([]string(nil), body[:1]...), body[3:]...)), 2, ReasonRevisionGap},
		{"data changed", reseal(replaced(3, `\u003c1\u003e`, `\u003c2\u003e`)), 4, ReasonChainAltered},
		{"positions out of order", reseal(replaced(4, `"position":4`, `"position":2`)), 5, ReasonPositionOrder},
		{"events of two streams swapped", reseal(swap(1, 2)), 0, ""},
		{"an event moved before its predecessor", reseal(swap(1, 3)), 2, ReasonRevisionGap},
		{"header count changed", reseal(replaced(0, `"events":3`, `"events":2`)), 1, ReasonHeaderMismatch},
		{"seal digest wrong", []byte(strings.Replace(string(good), `"sha256":"`, `"sha256":"0`, 1)), 8, ReasonBadLine + "|" + ReasonSealDigest},
		{"no seal", []byte(strings.Join(body, "")), 8, ReasonMissingSeal},
		{"no final newline", bytes.TrimSuffix(good, []byte("\n")), 8, ReasonBadLine},
		{"a line after the seal", append(bytes.Clone(good), "{}\n"...), 9, ReasonMisplaced},
		{"unhashed after the genesis", write(t, Contents{Events: pre, Genesis: 1}, nil), 3, ReasonUnchained},
		{"anchor of another head", write(t, Contents{Events: evs, Anchor: []byte(`{"version":"zuno.anchor.2","heads":[{"stream":"inbox-ses_a","revision":0,"hash":"00"}]}`)}, nil), 8, ReasonAnchorMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Verify(c.data, Options{})
			if c.line == 0 {
				if res.Line == 0 || res.Valid {
					// Swapping lines of two streams keeps each stream's order but not the
					// positions' (2 before 1): still a failure.
					t.Fatalf("%+v", res)
				}
				return
			}
			if res.Valid || res.Line != c.line || !strings.Contains("|"+c.code+"|", "|"+res.Code()+"|") {
				t.Fatalf("got line %d %q, want line %d %s", res.Line, res.Reason, c.line, c.code)
			}
		})
	}
}

func TestSignatureRules(t *testing.T) {
	evs := chained(t, []string{"session-ses_a"}, 2, 0)
	signed := write(t, Contents{Events: evs}, key)
	unsigned := write(t, Contents{Events: evs}, nil)
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32))
	pub := key.Public().(ed25519.PublicKey)
	for _, c := range []struct {
		name string
		data []byte
		opts Options
		code string
	}{
		{"signed, trusted", signed, Options{TrustedKey: pub}, ""},
		{"signed by another", write(t, Contents{Events: evs}, other), Options{TrustedKey: pub}, ReasonSignatureKey},
		{"unsigned, key given", unsigned, Options{TrustedKey: pub}, ReasonSignatureMissing},
		{"unsigned, required", unsigned, Options{RequireSignature: true}, ReasonSignatureMissing},
		{"unsigned, not required", unsigned, Options{}, ""},
		{"signature changed", resign(signed, sigOf(other)), Options{}, ReasonSignatureInvalid},
		{"signature lengthened", []byte(strings.Replace(string(signed), `"value":"`, `"value":"AAAA`, 1)), Options{}, ReasonBadLine},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := Verify(c.data, c.opts)
			if res.Code() != c.code || res.Valid != (c.code == "") {
				t.Fatalf("%+v, want %q", res, c.code)
			}
		})
	}
}

func sigOf(k ed25519.PrivateKey) string { return seal("00", k).Signature.Value }

func sha(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// resign replaces the first four characters of the signature's value.
func resign(data []byte, with string) []byte {
	i := bytes.Index(data, []byte(`"value":"`)) + len(`"value":"`)
	out := bytes.Clone(data)
	copy(out[i:], with[:4])
	return out
}

// The verdict's JSON has the members docs/formats.md lists, as the Python verifier prints them.
func TestVerdictJSON(t *testing.T) {
	evs := chained(t, []string{"session-ses_a"}, 2, 0)
	data := write(t, Contents{Events: evs}, key)
	valid, _ := json.Marshal(Verify(data, Options{}))
	bad, _ := json.Marshal(Verify(bytes.Replace(data, []byte(`\u003c1`), []byte(`\u003c2`), 1), Options{}))
	if !regexp.MustCompile(`^\{"valid":true,"line":0,"events":2,"streams":1,"signed":true,"publicKey":"[A-Za-z0-9+/]{43}="\}$`).Match(valid) {
		t.Errorf("valid: %s", valid)
	}
	if !regexp.MustCompile(`^\{"valid":false,"line":3,"eventId":"session-ses_a-1","stream":"session-ses_a","revision":1,"reason":"chain_altered: [^"]+"\}$`).Match(bad) {
		t.Errorf("invalid: %s", bad)
	}
}
