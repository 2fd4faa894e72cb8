package loadtest_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"
)

// TestServeStreamsEveryEventOnce is the load benchmark's machinery at a size CI runs in
// seconds: a real `zuno serve`, 2 sessions of 2 turns started at once through the API, and 4
// clients streaming events (2 of /api/events, one of each session's stream). Every client
// must read every event its stream matches exactly once, in log order, as the log read by
// another process holds them, and every turn must complete.
func TestServeStreamsEveryEventOnce(t *testing.T) {
	w := workload{sessions: 2, turns: 2, steps: 3, global: 2, perSession: 1}
	r := runServe(t, zunoBinary(t), w, sqlite)
	if got, want := len(r.steps), w.sessions*w.turns*w.steps; got != want {
		t.Errorf("%d steps in the log, want %d (each turn: %d tool steps and an answer)", got, want, w.steps)
	}
	if len(r.latencies) == 0 {
		t.Fatal("no event was read live")
	}
	for _, l := range r.latencies {
		if l <= 0 {
			t.Fatalf("an event read %v after it was stamped: the client's and the server's clocks are not one", l)
		}
	}
	if r.peakMB <= 0 || r.deliveries < r.events {
		t.Errorf("peak %.1f MB, %d deliveries of %d events", r.peakMB, r.deliveries, r.events)
	}
	t.Logf("%d events, %d deliveries; delivery p50 %v; peak %.1f MB", r.events, r.deliveries, quantile(r.latencies, 0.5), r.peakMB)
}

// BenchmarkServeLoad is issue 28's load benchmark: a real `zuno serve` runs 16 sessions
// started at once through POST /api/sessions, each 3 turns of 5 tool steps (a shell echo,
// then 4 reads) and an answer, while 64 clients stream its events (32 of /api/events from
// before the first session, 2 of each session's stream from its first 202 on). It reports
// the events' delivery latency to the clients (p50, p99; see latencies), to the first client
// that read each (the same, less the fan-out), the server's peak resident memory (VmHWM), its
// CPU time per event and the events appended per second.
//
// The baselines run in the same benchmark: the same 16 sessions with no client
// (serve/clients=0: what the streams cost the server's steps), and the same script through
// `zuno run`, one process per turn (cli/sessions=1: one session at a time, as
// BenchmarkStepOverhead measures a step; cli/sessions=16: 16 sessions at once, 16 processes
// on one store). Every run reports its step time from the log (stepTimes), so all are
// measured alike. Each runs on SQLite, then on Postgres (the log on the test server,
// ZUNO_TEST_POSTGRES_URL; skipped without it). Each iteration starts a new server on a new
// store; an iteration is some seconds on 2 CPUs, so run it with -benchtime=1x:
//
//	go test ./ops/loadtest -run '^$' -bench ServeLoad -benchtime 1x
func BenchmarkServeLoad(b *testing.B) {
	bin := zunoBinary(b)
	full := workload{sessions: 16, turns: 3, steps: 5, global: 32, perSession: 2}
	one, quiet := full, workload{sessions: 16, turns: 3, steps: 5}
	one.sessions = 1
	for _, store := range []string{sqlite, postgres} {
		for _, w := range []workload{one, full} {
			b.Run(fmt.Sprintf("%s/cli/sessions=%d", store, w.sessions), func(b *testing.B) {
				var all []result
				for b.Loop() {
					all = append(all, runCLI(b, bin, w, store))
				}
				report(b, all)
			})
		}
		loads := []workload{quiet, full}
		if store == sqlite {
			// The same 64 clients all on /api/events, then all on sessions' streams: whether a
			// stream costs the server per event it sends or per event of the log.
			allGlobal, allSession := full, full
			allGlobal.global, allGlobal.perSession = 64, 0
			allSession.global, allSession.perSession = 0, 4
			loads = append(loads, allGlobal, allSession)
		}
		for _, w := range loads {
			b.Run(fmt.Sprintf("%s/serve/clients=%d/global=%d", store, w.clients(), w.global), func(b *testing.B) {
				var all []result
				for b.Loop() {
					all = append(all, runServe(b, bin, w, store))
				}
				report(b, all)
			})
		}
	}
}

// report pools the runs' samples and reports them.
func report(b *testing.B, runs []result) {
	var pooled result
	for _, r := range runs {
		pooled.latencies = append(pooled.latencies, r.latencies...)
		pooled.first = append(pooled.first, r.first...)
		pooled.steps = append(pooled.steps, r.steps...)
		pooled.events += r.events
		pooled.deliveries += r.deliveries
		pooled.elapsed += r.elapsed
		pooled.peakMB = max(pooled.peakMB, r.peakMB)
		pooled.idleMB = max(pooled.idleMB, r.idleMB)
		pooled.serverCPU += r.serverCPU
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	µs := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(µs(quantile(pooled.steps, 0.5)), "µs/step")
	b.ReportMetric(µs(quantile(pooled.steps, 0.99)), "µs-p99/step")
	b.ReportMetric(float64(pooled.events)/pooled.elapsed.Seconds(), "events/s")
	if pooled.peakMB > 0 {
		b.ReportMetric(pooled.peakMB, "MB-peak-rss")
		b.ReportMetric(pooled.idleMB, "MB-idle-rss")
		b.ReportMetric(µs(pooled.serverCPU)/float64(pooled.events), "server-cpu-µs/event")
	}
	if len(pooled.latencies) > 0 {
		b.ReportMetric(ms(quantile(pooled.latencies, 0.5)), "ms-p50-delivery")
		b.ReportMetric(ms(quantile(pooled.latencies, 0.99)), "ms-p99-delivery")
		b.ReportMetric(ms(quantile(pooled.first, 0.5)), "ms-p50-first")
		b.ReportMetric(ms(quantile(pooled.first, 0.99)), "ms-p99-first")
		b.ReportMetric(float64(pooled.deliveries)/pooled.elapsed.Seconds(), "deliveries/s")
	}
}

// runServe is one run of w against a new `zuno serve` on a new store: the global
// clients connect, the sessions start at once, the per-session clients connect after their
// session's first 202; once every turn has completed and the log has settled, each client
// must have read its stream's events exactly once, in order (checkExactlyOnce).
func runServe(tb testing.TB, bin string, w workload, store string) result {
	tb.Helper()
	e := newEnv(tb, w, store)
	srv := startServer(tb, bin, e)
	var r result
	var err error
	if r.idleMB, err = srv.memory("VmRSS"); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	streams, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var (
		mu      sync.Mutex
		clients []*sseClient
		running sync.WaitGroup
	)
	open := func(c *sseClient) {
		mu.Lock()
		clients = append(clients, c)
		mu.Unlock()
		running.Go(func() {
			if err := c.run(streams); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
		})
	}
	for range w.global {
		open(&sseClient{url: srv.url + "/api/events"})
	}
	if err := waitConnected(ctx, clients); err != nil {
		tb.Fatalf("%v\n%s", err, srv.log())
	}

	cpu0, err := srv.cpu()
	if err != nil {
		tb.Fatal(err)
	}
	sessions := &lister{}
	polling, stopPolling := context.WithCancel(ctx)
	var poller sync.WaitGroup
	poller.Go(func() { sessions.run(polling, srv.url) })
	start := time.Now()
	errs := make([]error, w.sessions)
	var drivers sync.WaitGroup
	for i := range w.sessions {
		drivers.Go(func() {
			_, errs[i] = driveSession(ctx, srv.url, sessions, w, e, i, func(sid string) {
				for range w.perSession {
					open(&sseClient{url: srv.url + "/api/sessions/" + sid + "/events", session: sid})
				}
			})
		})
	}
	drivers.Wait()
	r.elapsed = time.Since(start)
	stopPolling()
	poller.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatalf("%v\n%s", err, srv.log())
		}
	}

	log, err := settledLog(ctx, bin, e, w.sessions*w.turns)
	if err != nil {
		tb.Fatalf("%v\n%s", err, srv.log())
	}
	caughtUp, done := context.WithTimeout(ctx, time.Minute)
	defer done()
	for _, c := range clients {
		if err := waitCaughtUp(caughtUp, c, log); err != nil {
			tb.Fatalf("%v\n%s", err, srv.log())
		}
	}
	if r.peakMB, err = srv.memory("VmHWM"); err != nil {
		tb.Fatal(err)
	}
	cpu1, err := srv.cpu()
	if err != nil {
		tb.Fatal(err)
	}
	r.serverCPU = cpu1 - cpu0
	stopStreams()
	running.Wait()
	srv.stop(tb)
	if srv.waitErr != nil {
		tb.Errorf("zuno serve, interrupted, exited: %v\n%s", srv.waitErr, srv.log())
	}
	first := map[uint64]time.Duration{}
	for _, c := range clients {
		if c.err != nil {
			tb.Fatalf("%s: %v", c.url, c.err)
		}
		if err := checkExactlyOnce(c, log); err != nil {
			tb.Fatal(err)
		}
		for pos, l := range latencies(c) {
			r.latencies = append(r.latencies, l)
			if f, ok := first[pos]; !ok || l < f {
				first[pos] = l
			}
		}
		r.deliveries += len(c.got)
	}
	for _, l := range first {
		r.first = append(r.first, l)
	}
	r.events = len(log)
	r.steps = stepTimes(log)
	return r
}

// waitConnected waits until every client's stream is open.
func waitConnected(ctx context.Context, clients []*sseClient) error {
	for _, c := range clients {
		for {
			c.mu.Lock()
			connected, err := !c.connected.IsZero(), c.err
			c.mu.Unlock()
			if err != nil {
				return err
			}
			if connected {
				break
			}
			if err := sleep(ctx, 10*time.Millisecond); err != nil {
				return fmt.Errorf("%s: not connected: %w", c.url, err)
			}
		}
	}
	return nil
}

var sessionLine = regexp.MustCompile(`\[session (ses_[0-9a-f]+) · completed`)

// runCLI runs w's sessions through `zuno run`, one process per turn (--session for the
// next), w.sessions at once, on a new store, and measures their steps from the log.
func runCLI(tb testing.TB, bin string, w workload, store string) result {
	tb.Helper()
	e := newEnv(tb, w, store)
	start := time.Now()
	errs := make([]error, w.sessions)
	var wg sync.WaitGroup
	for i := range w.sessions {
		wg.Go(func() {
			sid := ""
			for k := 1; k <= w.turns; k++ {
				args := []string{"run", "--quiet", "--title", fmt.Sprintf("load %d", i)}
				if sid != "" {
					args = []string{"run", "--quiet", "--session", sid}
				}
				out, err := e.command(bin, append(args, fmt.Sprintf("turn %d", k))...).CombinedOutput()
				m := sessionLine.FindSubmatch(out)
				if err != nil || m == nil {
					errs[i] = fmt.Errorf("zuno run, session %d turn %d: %v\n%s", i, k, err, out)
					return
				}
				sid = string(m[1])
			}
		})
	}
	wg.Wait()
	r := result{elapsed: time.Since(start)}
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	log, err := readLog(bin, e)
	if err != nil {
		tb.Fatal(err)
	}
	r.events = len(log)
	r.steps = stepTimes(log)
	if got, want := len(r.steps), w.sessions*w.turns*w.steps; got != want {
		tb.Fatalf("%d steps in the log, want %d", got, want)
	}
	return r
}
