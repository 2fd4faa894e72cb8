package bundle

import (
	"bytes"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// BenchmarkVerify checks a signed bundle of 10,000 events of 4 streams; its baseline, in the
// same run, is the chain walk of `zuno verify` over the same events already decoded in
// memory (events.ChainWalker): what parsing the file and checking the seal add.
func BenchmarkVerify(b *testing.B) {
	evs := chained(b, []string{"session-ses_a", "inbox-ses_a", "jobs-ses_a", "bg-ses_a"}, 2500, 0)
	var buf bytes.Buffer
	if err := Write(&buf, Contents{Sessions: []string{"ses_a"}, Events: evs}, key); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.Run("bundle", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if res := Verify(data, Options{}); !res.Valid {
				b.Fatal(res)
			}
		}
		b.ReportMetric(float64(len(evs)*b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("baseline-chain-walk", func(b *testing.B) {
		for b.Loop() {
			w := events.NewChainWalker(0, nil)
			for _, r := range evs {
				w.Add(r)
			}
			if len(w.Faults()) > 0 {
				b.Fatal(w.Faults())
			}
		}
		b.ReportMetric(float64(len(evs)*b.N)/b.Elapsed().Seconds(), "events/s")
	})
}
