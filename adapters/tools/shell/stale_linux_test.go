package shell

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// staleGuardName is argv[0] of this test binary playing a zuno-guard older than the split
// request (a session guard that answers every request it cannot read as the real one does).
const staleGuardName = "zuno-stale-session-guard-test"

func init() {
	if len(os.Args) == 1 && os.Args[0] == staleGuardName {
		os.Exit(staleGuard())
	}
}

// staleGuard reads whole requests on guard.SessionFD and refuses each.
func staleGuard() int {
	head := make([]byte, 8)
	oob := make([]byte, syscall.CmsgSpace(4*66))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(guard.SessionFD, head, oob, syscall.MSG_CMSG_CLOEXEC)
		if err != nil || n != len(head) {
			return 0
		}
		if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				fds, _ := syscall.ParseUnixRights(&m)
				for _, fd := range fds {
					syscall.Close(fd)
				}
			}
		}
		body := make([]byte, int(head[0])|int(head[1])<<8|int(head[2])<<16|int(head[3])<<24)
		for got := 0; got < len(body); {
			n, err := syscall.Read(guard.SessionFD, body[got:])
			if err != nil || n == 0 {
				return 0
			}
			got += n
		}
		_, _ = syscall.Write(guard.SessionFD, []byte(guard.ReplyInvalid+"\n"))
	}
}

// A zuno-guard older than this zuno cannot read a request that splits the command's fd 1 and
// 2 (the git pre-flight's): it refuses it having started nothing, the command runs under a
// guard of its own with its streams apart, and the old guard stays in the pool.
func TestStaleSessionGuardFallsBackToAGuardOfItsOwn(t *testing.T) {
	stale, err := startGuardProcess("/proc/self/exe", staleGuardName)
	if err != nil {
		t.Fatal(err)
	}
	sessionGuards.put(stale)
	defer func() {
		if g := sessionGuards.get(); g != stale {
			t.Errorf("the stale guard was not kept in the pool")
			sessionGuards.put(g)
		}
		stale.close()
	}()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	proc, err := (&Runner{}).StartGuarded(Spec{Argv: []string{"bash", "-c", `tr '\0' ' ' < /proc/$PPID/cmdline; echo err >&2`},
		Env: os.Environ(), Stdout: outW, Stderr: errW})
	outW.Close()
	errW.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := readAllClose(outR)
	errOut, _ := readAllClose(errR)
	gs, err := proc.Settle()
	if err != nil || !gs.HasExitCode || gs.ExitCode != 0 {
		t.Fatalf("%+v %v", gs, err)
	}
	if !strings.HasPrefix(out, GuardName+" 0 -- ") || errOut != "err\n" {
		t.Fatalf("stdout %q, stderr %q: want a guard of its own, streams apart", out, errOut)
	}
}

func readAllClose(f *os.File) (string, error) {
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}
