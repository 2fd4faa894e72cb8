package shell

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGuardedRun measures one `true` through the runner under the session guard and
// under the per-command guard (this test binary re-executed: the fallback) against the
// baseline of running bash directly, in the same run (docs/shell-execution.md, "Cost").
// interleaved runs the baseline and the session guard in turn, one command each, so that
// the machine's changing load moves both alike; its ratio is the guard's cost.
func BenchmarkGuardedRun(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	direct := func(b *testing.B) {
		if err := exec.Command(bash, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	r := &Runner{}
	guarded := func(b *testing.B) {
		if res, err := r.Run(context.Background(), Request{Command: "true"}); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
	b.Run("baseline-bash", func(b *testing.B) {
		for b.Loop() {
			direct(b)
		}
	})
	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			guarded(b)
		}
	})
	b.Run("per-command", func(b *testing.B) {
		setPerCommand(true)
		defer setPerCommand(false)
		for b.Loop() {
			guarded(b)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var bashTime, sessionTime time.Duration
		for b.Loop() {
			t0 := time.Now()
			direct(b)
			t1 := time.Now()
			guarded(b)
			bashTime += t1.Sub(t0)
			sessionTime += time.Since(t1)
		}
		b.ReportMetric(float64(bashTime.Nanoseconds())/float64(b.N), "bash-ns/op")
		b.ReportMetric(float64(sessionTime.Nanoseconds())/float64(b.N), "session-ns/op")
		b.ReportMetric(float64(sessionTime)/float64(bashTime), "session/bash")
	})
	// runtime-cost is what this process itself spends per command, which the machine's load
	// does not change: CPU time and voluntary context switches (each a wakeup: a thread that
	// blocked and was woken), bash started directly against the runner, in turn. The guard's
	// own CPU is not in it (it is not this process, and is not waited for).
	b.Run("runtime-cost", func(b *testing.B) {
		var bash, session usage
		guarded(b) // the session guard the loop reuses (the top of the idle stack)
		guardPid := idleGuardPid()
		guard0 := processCPU(guardPid)
		for b.Loop() {
			u0 := rusage(b)
			direct(b)
			u1 := rusage(b)
			guarded(b)
			u2 := rusage(b)
			bash = bash.add(u1.sub(u0))
			session = session.add(u2.sub(u1))
		}
		n := float64(b.N)
		b.ReportMetric(float64(bash.cpu.Microseconds())/n, "bash-cpu-us/op")
		b.ReportMetric(float64(session.cpu.Microseconds())/n, "session-cpu-us/op")
		b.ReportMetric(float64(bash.switches)/n, "bash-csw/op")
		b.ReportMetric(float64(session.switches)/n, "session-csw/op")
		if guardPid == idleGuardPid() && guardPid > 0 {
			// The guard's own CPU (its clock-tick accounting: meaningful over many commands).
			b.ReportMetric(float64((processCPU(guardPid)-guard0).Microseconds())/n, "guard-cpu-us/op")
		}
	})
}

// idleGuardPid is the session guard at the top of the idle stack (0: none).
func idleGuardPid() int {
	sessionGuards.mu.Lock()
	defer sessionGuards.mu.Unlock()
	if len(sessionGuards.idle) == 0 {
		return 0
	}
	return sessionGuards.idle[len(sessionGuards.idle)-1].cmd.Process.Pid
}

// processCPU is pid's own user and system time (/proc/PID/stat, in clock ticks of 10 ms).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// usage is this process's CPU time and voluntary context switches.
type usage struct {
	cpu      time.Duration
	switches int64
}

func (u usage) sub(v usage) usage { return usage{u.cpu - v.cpu, u.switches - v.switches} }
func (u usage) add(v usage) usage { return usage{u.cpu + v.cpu, u.switches + v.switches} }

func rusage(b *testing.B) usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return usage{time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw}
}
