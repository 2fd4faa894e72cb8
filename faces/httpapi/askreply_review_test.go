package httpapi_test

import (
	"testing"
)

// Review attack: replies spelled otherwise than once, always, reject. Each is refused as bad
// input (400, nothing recorded), the ask stays pending, and the right spelling then answers it.
func TestAPIReplySpelledOtherwise(t *testing.T) {
	f := newFixture(t, options{})
	f.writeScript("default", writeScript)
	a := f.start("cmd-spelled", "write a.txt")
	ask := f.pendingAsk(a.SessionID)
	for _, reply := range []string{`{"reply":"ONCE"}`, `{"reply":"Always"}`, `{"reply":" once"}`, `{"reply":"o"}`, `{"reply":""}`} {
		r := f.do("POST", "/api/sessions/"+a.SessionID+"/asks/"+ask+"/reply", reply)
		if r.status != 400 {
			t.Fatalf("%s: %d %s", reply, r.status, r.body)
		}
	}
	if got := f.pendingAsk(a.SessionID); got != ask {
		t.Fatalf("pending ask %q, want %q", got, ask)
	}
	if r := f.do("POST", "/api/sessions/"+a.SessionID+"/asks/"+ask+"/reply", `{"reply":"reject"}`); r.status != 204 {
		t.Fatalf("reject: %d %s", r.status, r.body)
	}
}
