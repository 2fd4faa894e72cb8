package sandbox_test

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
)

// runBPF interprets the classic BPF subset the filter uses over one struct seccomp_data
// (little-endian), returning the filter's verdict.
func runBPF(t *testing.T, prog []byte, arch uint32, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog)/8; pc++ {
		in := prog[8*pc:]
		code, jt, jf, k := binary.LittleEndian.Uint16(in), in[2], in[3], binary.LittleEndian.Uint32(in[4:])
		switch code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[k:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= k
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			hit := acc == k
			if code&0xf0 == unix.BPF_JGE {
				hit = acc >= k
			}
			if hit {
				pc += int(jt)
			} else {
				pc += int(jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return k
		default:
			t.Fatalf("unexpected instruction %#x at %d", code, pc)
		}
	}
	t.Fatal("the filter fell off its end")
	return 0
}

func TestNetworkFilterDecisions(t *testing.T) {
	const allow, eperm = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	type nrs struct{ socket, socketpair, connect, read, sendmsg uint32 }
	for _, tc := range []struct {
		goarch  string
		arch    uint32
		foreign uint32
		n       nrs
	}{
		{"amd64", unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_I386, nrs{41, 53, 42, 0, 46}},
		{"arm64", unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM, nrs{198, 199, 203, 63, 211}},
	} {
		prog, err := adsandbox.NetworkFilter(tc.goarch)
		if err != nil {
			t.Fatal(err)
		}
		n := tc.n
		cases := []struct {
			name string
			arch uint32
			nr   uint32
			args []uint64
			want uint32
		}{
			{"read", tc.arch, n.read, nil, allow},
			{"sendmsg", tc.arch, n.sendmsg, nil, allow},
			{"unix stream socket", tc.arch, n.socket, []uint64{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, allow},
			{"unix seqpacket socket", tc.arch, n.socket, []uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET}, allow},
			{"unix stream socketpair", tc.arch, n.socketpair, []uint64{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_NONBLOCK}, allow},
			{"unix datagram socket", tc.arch, n.socket, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, eperm},
			{"unix datagram socketpair", tc.arch, n.socketpair, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, eperm},
			{"inet socket", tc.arch, n.socket, []uint64{unix.AF_INET, unix.SOCK_STREAM}, eperm},
			{"inet6 socket", tc.arch, n.socket, []uint64{unix.AF_INET6, unix.SOCK_DGRAM}, eperm},
			{"netlink socket", tc.arch, n.socket, []uint64{unix.AF_NETLINK, unix.SOCK_RAW}, eperm},
			{"packet socket", tc.arch, n.socket, []uint64{unix.AF_PACKET, unix.SOCK_RAW}, eperm},
			{"inet with AF_UNIX in the high half", tc.arch, n.socket, []uint64{1<<32 | unix.AF_INET, unix.SOCK_STREAM}, eperm},
			{"connect", tc.arch, n.connect, []uint64{3}, eperm},
			{"io_uring_setup", tc.arch, 425, nil, eperm},
			{"io_uring_enter", tc.arch, 426, nil, eperm},
			{"io_uring_register", tc.arch, 427, nil, eperm},
			{"foreign ABI read", tc.foreign, 3, nil, eperm},
			{"foreign ABI socket", tc.foreign, 359, []uint64{unix.AF_INET}, eperm},
		}
		if tc.goarch == "amd64" {
			cases = append(cases, struct {
				name string
				arch uint32
				nr   uint32
				args []uint64
				want uint32
			}{"x32 socket", tc.arch, 0x40000000 | 41, []uint64{unix.AF_INET}, eperm})
		}
		for _, c := range cases {
			if got := runBPF(t, prog, c.arch, c.nr, c.args...); got != c.want {
				t.Errorf("%s %s: verdict %#x, want %#x", tc.goarch, c.name, got, c.want)
			}
		}
	}
	if _, err := adsandbox.NetworkFilter("riscv64"); err == nil {
		t.Error("an architecture without a filter must be an error (network deny fails closed)")
	}
}

// The filter's numbers are this architecture's.
func TestNetworkFilterNativeNumbers(t *testing.T) {
	prog, err := adsandbox.NetworkFilter(runtime.GOARCH)
	if err != nil {
		t.Skipf("no filter for %s: %v", runtime.GOARCH, err)
	}
	arch := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	for _, c := range []struct {
		nr   uintptr
		args []uint64
	}{{unix.SYS_SOCKET, []uint64{unix.AF_INET}}, {unix.SYS_SOCKETPAIR, []uint64{unix.AF_INET6}}, {unix.SYS_CONNECT, nil},
		{unix.SYS_IO_URING_SETUP, nil}, {unix.SYS_IO_URING_ENTER, nil}, {unix.SYS_IO_URING_REGISTER, nil}} {
		if got := runBPF(t, prog, arch, uint32(c.nr), c.args...); got == unix.SECCOMP_RET_ALLOW {
			t.Errorf("system call %d is allowed", c.nr)
		}
	}
}
