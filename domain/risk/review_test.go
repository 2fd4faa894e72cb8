package risk_test

// Security review (helper/review): spellings that bash runs catastrophically and the gate
// grades lower. Each case fails while the gate misses it. The sandbox confines these when a
// confined backend runs; under danger-full-access, a native backend or the run-unconfined
// fallback the gate is the only boundary, and a "safe" grade runs without any prompt even in
// standard mode.

import (
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

func TestReviewMissedSpellings(t *testing.T) {
	cases := []struct {
		command string
		want    risk.Level
		why     string
	}{
		// Wrappers that run their arguments as a command, not in the wrapper list: graded
		// safe, so standard mode runs them without asking.
		{"taskset 1 rm -rf ~", risk.Catastrophic, "taskset runs its arguments"},
		{"taskset -c 0 rm -rf /", risk.Catastrophic, "taskset runs its arguments"},
		{"chrt 0 rm -rf /", risk.Catastrophic, "chrt runs its arguments"},
		{"prlimit --nofile=10 rm -rf /", risk.Catastrophic, "prlimit runs its arguments"},
		{"numactl -- rm -rf /", risk.Catastrophic, "numactl runs its arguments"},
		{"unshare rm -rf /", risk.Catastrophic, "unshare runs its arguments"},
		{"strace -f rm -rf /", risk.Catastrophic, "strace runs its arguments"},
		{"runuser -u root -- rm -rf /", risk.Catastrophic, "runuser runs its arguments"},
		{"sg root -c 'rm -rf /'", risk.Catastrophic, "sg -c is shell text"},
		{"script -qc 'rm -rf /' /dev/null", risk.Catastrophic, "script -c is shell text"},
		{"systemd-run --user rm -rf ~", risk.Catastrophic, "systemd-run runs its arguments (outside any sandbox)"},
		{"parallel rm -rf ::: /", risk.Catastrophic, "GNU parallel runs its arguments"},
		// Shell text run again through process substitution or /dev/stdin.
		{"bash <(echo rm -rf /)", risk.Catastrophic, "bash reads the process substitution as a script"},
		{"source <(echo rm -rf /)", risk.Catastrophic, "source of a process substitution"},
		{"bash < <(echo rm -rf /)", risk.Catastrophic, "bash reads stdin from a process substitution"},
		{". /dev/stdin <<< 'rm -rf /'", risk.Catastrophic, "sourcing stdin fed a here-string"},
		// Word splitting with a reassigned IFS.
		{"IFS=,; x=rm,-rf,/; $x", risk.Catastrophic, "bash splits $x at the commas"},
		// Values the text decides, read as unknown (destructive), so allow_all runs them.
		{"set -- /; rm -rf \"$1\"", risk.Catastrophic, "set -- assigns $1"},
		{"x=(/); rm -rf \"${x[0]}\"", risk.Catastrophic, "an array element"},
		{"printf -v x /; rm -rf $x", risk.Catastrophic, "printf -v assigns x"},
		{"read x <<< /; rm -rf $x", risk.Catastrophic, "read assigns x"},
		{"cd / && rm -rf \"$PWD\"", risk.Catastrophic, "cd sets PWD"},
		{"cd / && rm -rf ~+", risk.Catastrophic, "~+ is $PWD"},
		{"ln -s / r && rm -rf r/", risk.Catastrophic, "the text links r to / before deleting through it"},
		// Writers onto credentials, where a redirection is catastrophic.
		{"cp /dev/null ~/.ssh/id_rsa", risk.Catastrophic, "empties a credential file, like : > ~/.ssh/id_rsa"},
		{"tee ~/.ssh/authorized_keys </dev/null", risk.Catastrophic, "tee truncates its file operands"},
		{"mv junk ~/.ssh/authorized_keys", risk.Catastrophic, "mv replaces a credential file"},
		{"ln -sf /dev/null ~/.ssh/authorized_keys", risk.Catastrophic, "ln -f replaces a credential file"},
		{"sed -i d ~/.ssh/authorized_keys", risk.Catastrophic, "sed -i empties a credential file"},
		{"cp /dev/null /etc/shadow", risk.Destructive, "overwrites a protected file, like > /etc/hosts"},
	}
	for _, tc := range cases {
		v := risk.Assess(tc.command, risk.Env{Home: "/home/u"})
		if rank(v.Level) < rank(tc.want) {
			t.Errorf("BROKEN: %q is %s (%s), want %s: %s", tc.command, v.Level, v.Reason, tc.want, tc.why)
		}
	}
}

func rank(l risk.Level) int {
	switch l {
	case risk.Catastrophic:
		return 2
	case risk.Destructive:
		return 1
	}
	return 0
}
