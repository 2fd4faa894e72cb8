package bus_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/adapters/bus"
	"github.com/zuno-run/zuno/adapters/pgtest"
)

// The helper process: this test binary re-executed with helperEnv set opens the transport on
// the database it names and, by helperModeEnv, either waits for replies ("replies") or takes
// one CreateSession command without acknowledging it ("take"), says so on stdout, and sleeps
// until it is killed.
const (
	helperEnv     = "ZUNO_BUS_TEST_HELPER_URL"
	helperModeEnv = "ZUNO_BUS_TEST_HELPER_MODE"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(helperEnv); url != "" {
		if err := helperMain(url, os.Getenv(helperModeEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		return
	}
	os.Exit(m.Run())
}

func helperMain(url, mode string) error {
	ctx := context.Background()
	db, err := sql.Open("postgres", url)
	if err != nil {
		return err
	}
	p, err := bus.NewPostgres(ctx, db, bus.Config{Holder: holderOf(os.Getpid()), Heartbeat: 100 * time.Millisecond, Metrics: bus.NewMetrics(nil)})
	if err != nil {
		return err
	}
	switch mode {
	case "take":
		sub, err := p.Transport().CommandSubscriber("CreateSession")
		if err != nil {
			return err
		}
		msgs, err := sub.Subscribe(ctx, "zuno.commands.CreateSession")
		if err != nil {
			return err
		}
		msg := <-msgs
		fmt.Println("took", msg.UUID)
	default:
		fmt.Println("address", p.Transport().ReplyAddress)
	}
	select {} // until SIGKILL: no Close, so the queue (or the taken command) is left behind
}

// holderOf names a process of this host as the application does (host/pid/random).
func holderOf(pid int) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/test", host, pid)
}

// exitedHere is Config.Gone for the test's holders: a process of this host that has exited.
func exitedHere(holder string) bool {
	parts := strings.Split(holder, "/")
	host, _ := os.Hostname()
	if len(parts) != 3 || parts[0] != host {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// helper is a running helper process and the first line it printed.
type helper struct {
	cmd  *exec.Cmd
	said string
}

func startHelper(t *testing.T, url, mode string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+url, helperModeEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd}
	t.Cleanup(h.kill)
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
	}()
	select {
	case h.said = <-line:
	case <-time.After(time.Minute):
		t.Fatalf("helper %s said nothing", mode)
	}
	return h
}

// kill SIGKILLs the helper, as a crash would end it: nothing of its Close runs.
func (h *helper) kill() {
	if h.cmd.ProcessState == nil {
		h.cmd.Process.Signal(syscall.SIGKILL)
		h.cmd.Wait()
	}
}

func (h *helper) address() string { return strings.TrimPrefix(h.said, "address ") }

func openDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func startTransport(t *testing.T, url string, cfg bus.Config) *bus.Postgres {
	t.Helper()
	p, err := bus.NewPostgres(context.Background(), openDB(t, url), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// replyTables are the reply queue tables of the database, by address.
func replyTables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'watermill\_zuno\_replies\_%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, strings.TrimPrefix(s, "watermill_"))
	}
	return out
}

// A process killed with SIGKILL leaves its reply queue; a transport that starts afterwards
// keeps it while the rule does not say the process is dead (its last heartbeat is younger than
// DeadAfter), and its cleaning drops it once it does, the periodic one included. A live, idle
// process's queue is kept all along: it heartbeats.
func TestKilledProcessReplyQueueDroppedByAge(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := openDB(t, url)
	killed := startHelper(t, url, "replies")
	live := startHelper(t, url, "replies")
	if got := replyTables(t, db); len(got) != 2 || !slices.Contains(got, killed.address()) || !slices.Contains(got, live.address()) {
		t.Fatalf("reply tables %v; want the helpers' %s and %s", got, killed.address(), live.address())
	}
	killed.kill()
	killedAt := time.Now()

	const deadAfter = 2 * time.Second
	reg := prometheus.NewRegistry()
	p := startTransport(t, url, bus.Config{DeadAfter: deadAfter, Heartbeat: time.Hour, Metrics: bus.NewMetrics(reg)})
	if time.Since(killedAt) < deadAfter && !slices.Contains(replyTables(t, db), killed.address()) {
		t.Fatalf("the killed process's queue was dropped %v after its last heartbeat, before DeadAfter %v", time.Since(killedAt), deadAfter)
	}
	time.Sleep(time.Until(killedAt.Add(deadAfter + 500*time.Millisecond)))
	dropped, err := p.Clean(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dropped, []string{killed.address()}) {
		t.Fatalf("dropped %v, want only the killed process's %s", dropped, killed.address())
	}
	got := replyTables(t, db)
	if slices.Contains(got, killed.address()) || !slices.Contains(got, live.address()) || !slices.Contains(got, p.Transport().ReplyAddress) {
		t.Fatalf("after cleaning: %v; want the live helper's %s and ours kept, the killed one's gone", got, live.address())
	}
	if n := gathered(t, reg, "zuno_bus_reply_queues_dropped_total"); n != 1 {
		t.Fatalf("zuno_bus_reply_queues_dropped_total = %v, want 1", n)
	}

	// The periodic cleaning of a running transport finds the next one by itself.
	second := startHelper(t, url, "replies")
	startTransport(t, url, bus.Config{DeadAfter: deadAfter, Heartbeat: 100 * time.Millisecond})
	second.kill()
	deadline := time.Now().Add(30 * time.Second)
	for slices.Contains(replyTables(t, db), second.address()) {
		if time.Now().After(deadline) {
			t.Fatalf("the periodic cleaning never dropped %s", second.address())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !slices.Contains(replyTables(t, db), live.address()) {
		t.Fatal("the live helper's queue was dropped")
	}
}

// gathered is the value of the counter name in reg, summed over its labels.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// A process of this host that has exited is dead at once (Config.Gone): the next start drops
// its queue without waiting for DeadAfter; a queue without a registration (an older build's,
// or one a worker re-created by replying to a dead process) is dropped too.
func TestExitedProcessReplyQueueDroppedAtStart(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := openDB(t, url)
	killed := startHelper(t, url, "replies")
	live := startHelper(t, url, "replies")
	if _, err := db.Exec(`CREATE TABLE "watermill_zuno_replies_0rphan" (x int)`); err != nil {
		t.Fatal(err)
	}
	killed.kill()
	p := startTransport(t, url, bus.Config{Gone: exitedHere})
	got := replyTables(t, db)
	want := []string{live.address(), p.Transport().ReplyAddress}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after the start: %v; want only the live ones %v", got, want)
	}
}

// Transports starting at once, with dead queues to drop, all start, and clean each dead queue
// once between them (under the advisory lock), never a live one.
func TestConcurrentStartsCleanSafely(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := openDB(t, url)
	var dead []string
	for range 3 {
		h := startHelper(t, url, "replies")
		dead = append(dead, h.address())
		h.kill()
	}
	live := startHelper(t, url, "replies")
	const n = 4
	var wg sync.WaitGroup
	started := make([]*bus.Postgres, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started[i], errs[i] = bus.NewPostgres(context.Background(), openDB(t, url), bus.Config{Gone: exitedHere})
		}()
	}
	wg.Wait()
	for i, p := range started {
		if errs[i] != nil {
			t.Fatalf("start %d: %v", i, errs[i])
		}
		t.Cleanup(func() { p.Close() })
	}
	got := replyTables(t, db)
	for _, d := range dead {
		if slices.Contains(got, d) {
			t.Errorf("dead queue %s survived", d)
		}
	}
	if len(got) != n+1 || !slices.Contains(got, live.address()) {
		t.Fatalf("tables %v; want the live helper's and the %d new ones", got, n)
	}
}

// A live process whose heartbeats stalled past DeadAfter is taken for dead; at its next
// heartbeat it finds its registration gone, and registers and creates its queue again.
func TestStalledProcessRegistersAgain(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := openDB(t, url)
	p := startTransport(t, url, bus.Config{Heartbeat: 100 * time.Millisecond})
	address := p.Transport().ReplyAddress
	// What a cleaner does to a dead queue.
	if _, err := db.Exec(`DELETE FROM zuno_bus_reply_queues WHERE address = $1`, address); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE "watermill_` + address + `"`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Contains(replyTables(t, db), address) {
		if time.Now().After(deadline) {
			t.Fatal("the queue was never created again")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var rows int
	db.QueryRow(`SELECT count(*) FROM zuno_bus_reply_queues WHERE address = $1`, address).Scan(&rows)
	if rows != 1 {
		t.Fatalf("registration rows for %s: %d", address, rows)
	}
}

// A command a worker took and never acknowledged (its process was killed) is delivered again
// to the next worker, and counted as a redelivery there: the count is kept in the database,
// because the delivery that matters happens in another process.
func TestRedeliveryAfterCrashCounted(t *testing.T) {
	url := pgtest.NewDatabase(t)
	reg := prometheus.NewRegistry()
	metrics := bus.NewMetrics(reg)
	sender := startTransport(t, url, bus.Config{Metrics: metrics})
	msg := message.NewMessage("cmd-1", []byte(`{}`))
	if err := sender.Transport().Publisher.Publish("zuno.commands.CreateSession", msg); err != nil {
		t.Fatal(err)
	}
	depth, err := sender.QueueDepth(context.Background())
	if err != nil || depth["CreateSession"].Depth != 1 {
		t.Fatalf("queue depth before any worker: %v %v", depth, err)
	}
	taker := startHelper(t, url, "take")
	if taker.said != "took cmd-1" {
		t.Fatalf("helper said %q", taker.said)
	}
	taker.kill()

	sub, err := sender.Transport().CommandSubscriber("CreateSession")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := sub.Subscribe(ctx, "zuno.commands.CreateSession")
	if err != nil {
		t.Fatal(err)
	}
	got := <-msgs
	if got == nil || got.UUID != "cmd-1" {
		t.Fatalf("redelivered %v", got)
	}
	// Nacked: watermill-sql delivers it again at once, in this process.
	got.Nack()
	again := <-msgs
	if again == nil || again.UUID != "cmd-1" {
		t.Fatalf("after a nack: %v", again)
	}
	again.Ack()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP zuno_bus_redeliveries_total Commands a worker of this process received that had been delivered before (to a worker that crashed or nacked), by command.
# TYPE zuno_bus_redeliveries_total counter
zuno_bus_redeliveries_total{command="CreateSession"} 2
`), "zuno_bus_redeliveries_total"); err != nil {
		t.Fatal(err)
	}
	// Acknowledged: nothing waits any more (the ack commits with the subscriber's next poll).
	deadline := time.Now().Add(10 * time.Second)
	for {
		depth, err = sender.QueueDepth(context.Background())
		if err == nil && depth["CreateSession"].Depth == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue depth after the ack: %v %v", depth, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := sub.Close(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
