package queries_test

import (
	"context"
	"runtime/pprof"
	"syscall"
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
// Each is reported in wall time and in the process's CPU time (user and system, every
// goroutine's, the garbage collector's included), which the load of a shared machine changes
// less: the audit reads in one goroutine while it checks in another, so its wall time is
// below its CPU time where a second CPU is free.
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
	var one, each100, all100, all, p10, p1000 spent
	// Each operation runs under a pprof label (op=one@10, all@1000, …): a CPU profile of the
	// benchmark (-cpuprofile) is read per operation with -tagfocus, the recording of the
	// sessions before the clock left out.
	timed := func(op string, into *spent, f func() error) {
		start, cpu := time.Now(), processCPU(b)
		var err error
		pprof.Do(ctx, pprof.Labels("op", op), func(context.Context) { err = f() })
		if err != nil {
			b.Fatal(err)
		}
		into.wall += time.Since(start)
		into.cpu += processCPU(b) - cpu
	}
	for b.Loop() {
		timed("one@10", &one, func() error {
			_, _, err := qs.PromptWithWire(ctx, "ses_10", 10, false, provider.RenderWire)
			return err
		})
		timed("each@100", &each100, func() error {
			for step := 1; step <= 100; step++ {
				if _, _, err := qm.PromptWithWire(ctx, "ses_100", step, false, provider.RenderWire); err != nil {
					return err
				}
			}
			return nil
		})
		timed("all@100", &all100, func() error { _, err := qm.AuditSession(ctx, "ses_100", provider.NewWireSums().Sum); return err })
		timed("all@1000", &all, func() error {
			a, err := ql.AuditSession(ctx, "ses_1000", provider.NewWireSums().Sum)
			if err == nil && (a.Fault != nil || a.Receipts != 1000 || a.Wire != 1000) {
				b.Fatalf("audit %+v %+v", a, a.Fault)
			}
			return err
		})
		timed("prompt@10", &p10, func() error { _, err := ql.Prompt(ctx, "ses_1000", 10, false); return err })
		timed("prompt@1000", &p1000, func() error { _, err := ql.Prompt(ctx, "ses_1000", 1000, false); return err })
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / n }
	report := func(name string, s spent) {
		b.ReportMetric(ms(s.wall), "ms/"+name)
		b.ReportMetric(ms(s.cpu), "cpu-ms/"+name)
	}
	ratio := func(name string, a, base spent) {
		b.ReportMetric(float64(a.wall)/float64(base.wall), "ratio-"+name)
		b.ReportMetric(float64(a.cpu)/float64(base.cpu), "cpu-ratio-"+name)
	}
	report("one@10", one)
	report("all@1000", all)
	ratio("all@1000/one@10", all, one)
	report("all@100", all100)
	report("each@100", each100)
	ratio("all@1000/100", all, all100)
	report("prompt@10", p10)
	report("prompt@1000", p1000)
	ratio("prompt@1000/10", p1000, p10)
}

// spent is the wall and CPU time an operation took, summed over the benchmark's loop.
type spent struct{ wall, cpu time.Duration }

// processCPU is the CPU time the process has used, user and system.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
