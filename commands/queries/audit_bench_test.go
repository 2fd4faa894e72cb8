package queries_test

import (
	"context"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider"
)

// BenchmarkAuditSession measures, in one run (docs/storage.md, "`zuno verify`"):
//
//   - one@10: verifying one step of a 10-step session as `zuno debug prompt --wire` does
//     (the receipt expanded and verified, the body rendered and hashed), the baseline;
//   - all@1000: the one-pass audit of every receipt and wire record of a 1,000-step
//     session, and its ratio to one@10 (the bound: at most 20); all@100, a 100-step
//     session's, shows the growth: linear when all@1000/all@100 is about 10; each@100 checks
//     the 100-step session's steps one at a time, as debug prompt --wire would, for comparison;
//   - prompt@10 and prompt@1000: `zuno debug prompt --step N` at steps 10 and 1,000 of the
//     1,000-step session, and their ratio.
//
// Both sessions are recorded by the turn driver through the OpenAI adapter over loopback HTTP
// into real SQLite logs, one tool call per step, before the clock starts.
func BenchmarkAuditSession(b *testing.B) {
	ctx := context.Background()
	short, mid, long := newAuditLog(b), newAuditLog(b), newAuditLog(b)
	short.create(b, "ses_10")
	short.turn(b, "ses_10", "loop", 9) // 10 requests
	mid.create(b, "ses_100")
	mid.turn(b, "ses_100", "loop", 99)
	long.create(b, "ses_1000")
	long.turn(b, "ses_1000", "loop", 999)
	qs, qm, ql := short.queries(), mid.queries(), long.queries()
	var one, each100, all100, all, p10, p1000 time.Duration
	timed := func(into *time.Duration, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*into += time.Since(start)
	}
	for b.Loop() {
		timed(&one, func() error {
			_, _, err := qs.PromptWithWire(ctx, "ses_10", 10, false, provider.RenderWire)
			return err
		})
		timed(&each100, func() error {
			for step := 1; step <= 100; step++ {
				if _, _, err := qm.PromptWithWire(ctx, "ses_100", step, false, provider.RenderWire); err != nil {
					return err
				}
			}
			return nil
		})
		timed(&all100, func() error { _, err := qm.AuditSession(ctx, "ses_100", provider.NewWireSums().Sum); return err })
		timed(&all, func() error {
			a, err := ql.AuditSession(ctx, "ses_1000", provider.NewWireSums().Sum)
			if err == nil && (a.Fault != nil || a.Receipts != 1000 || a.Wire != 1000) {
				b.Fatalf("audit %+v %+v", a, a.Fault)
			}
			return err
		})
		timed(&p10, func() error { _, err := ql.Prompt(ctx, "ses_1000", 10, false); return err })
		timed(&p1000, func() error { _, err := ql.Prompt(ctx, "ses_1000", 1000, false); return err })
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / n }
	b.ReportMetric(ms(one), "ms/one@10")
	b.ReportMetric(ms(all), "ms/all@1000")
	b.ReportMetric(float64(all)/float64(one), "ratio-all@1000/one@10")
	b.ReportMetric(ms(all100), "ms/all@100")
	b.ReportMetric(ms(each100), "ms/each@100")
	b.ReportMetric(float64(all)/float64(all100), "ratio-all@1000/100")
	b.ReportMetric(ms(p10), "ms/prompt@10")
	b.ReportMetric(ms(p1000), "ms/prompt@1000")
	b.ReportMetric(float64(p1000)/float64(p10), "ratio-prompt@1000/10")
}
