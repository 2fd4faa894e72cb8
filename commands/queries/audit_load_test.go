package queries_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// The walk checks a receipt while later events are still being read, with the blobs recorded
// so far; the reference pool is every receipt's (docs/formats/receipts.md §3). A tool
// declaration's blob moved from the first receipt, which records the header, to a later one
// is in the reference pool when the first is checked, and the later receipt references it
// too (its header is the first one's): every receipt verifies. The walk that found the blob
// missing at the first receipt must walk again and say so, not report the first receipt.
func TestAuditSessionTakesBlobsRecordedLater(t *testing.T) {
	l := newAuditLog(t)
	l.create(t, "ses_a")
	l.turn(t, "ses_a", "move a blob", 6)
	recs, err := l.store.ReadStream(context.Background(), "session-ses_a", 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var receipts []events.Recorded
	for _, r := range recs {
		if r.Type == (events.PromptAssembled{}).EventType() {
			receipts = append(receipts, r)
		}
	}
	first, later := decodeData(t, receipts[0]), decodeData(t, receipts[4])
	blobs := first["blobs"].(map[string]any)
	moved := first["tools"].([]any)[0].(map[string]any)["sha256"].(string)
	if later["blobs"] == nil {
		later["blobs"] = map[string]any{}
	}
	later["blobs"].(map[string]any)[moved] = blobs[moved]
	delete(blobs, moved)
	raw, err := sql.Open("sqlite", l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, c := range []struct {
		rec  events.Recorded
		data map[string]any
	}{{receipts[0], first}, {receipts[4], later}} {
		b, _ := json.Marshal(c.data)
		if _, err := raw.Exec(`UPDATE event_log SET data = ? WHERE event_id = ?`, string(b), c.rec.ID); err != nil {
			t.Fatal(err)
		}
	}
	l.open(t)
	got := audit(t, l.queries(), "ses_a")
	if got.Fault != nil || got.Receipts != len(receipts) || got.Wire != len(receipts) {
		t.Fatalf("audit %+v, fault %+v; want %d receipts and wire records verified", got, got.Fault, len(receipts))
	}
}

func decodeData(t *testing.T, r events.Recorded) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
