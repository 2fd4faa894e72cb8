package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// The network-deny system-call filter (classic BPF, handed to bwrap with --seccomp FD).
//
// The private network namespace leaves a command loopback only, but a Unix socket on the
// host's file system is reached through the file system, not the network namespace, and the
// read-only bind of / does not stop connect(2). Under network deny the filter therefore
// refuses, with EPERM:
//
//   - socket(2) and socketpair(2) for every address family but AF_UNIX, and AF_UNIX
//     datagram sockets (a datagram socket names its peer per message, in sendto(2) or
//     sendmsg(2), where a filter cannot read the address);
//   - connect(2), whatever the socket: only AF_UNIX stream and seqpacket sockets exist, and
//     the address they would connect to is a path the filter cannot read, so any connect
//     could reach a host daemon (Docker, D-Bus, ssh-agent, gpg-agent);
//   - io_uring_setup, io_uring_enter and io_uring_register (an io_uring can open and
//     connect sockets without the system calls above);
//   - every system call of another ABI than the native one (i386 or x32 on x86-64, arm32 on
//     arm64), which would otherwise reach socket calls under other numbers.
//
// socketpair(2) stream pairs, bind, listen, accept and everything else stay allowed: pipes
// and pre-connected pairs are how build tools talk to their children.

// seccompArch is one architecture's audit value and system-call numbers.
type seccompArch struct {
	audit uint32
	// x32 is set on x86-64, whose x32 ABI shares AUDIT_ARCH_X86_64 with numbers above
	// __X32_SYSCALL_BIT.
	x32                                     bool
	socket, socketpair, connect             uint32
	ioUringSetup, ioUringEnter, ioUringRegs uint32
}

var seccompArches = map[string]seccompArch{
	"amd64": {audit: unix.AUDIT_ARCH_X86_64, x32: true, socket: 41, socketpair: 53, connect: 42,
		ioUringSetup: 425, ioUringEnter: 426, ioUringRegs: 427},
	"arm64": {audit: unix.AUDIT_ARCH_AARCH64, socket: 198, socketpair: 199, connect: 203,
		ioUringSetup: 425, ioUringEnter: 426, ioUringRegs: 427},
}

const (
	x32SyscallBit = 0x40000000
	sockTypeMask  = 0xf // SOCK_TYPE_MASK: the type without SOCK_NONBLOCK / SOCK_CLOEXEC
	// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
	// Both supported architectures are little-endian: the low half of args[i] is at
	// 16+8i.
	offNr    = 0
	offArch  = 4
	offArg0  = 16
	offArg1  = 24
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
)

// NetworkFilter returns the network-deny filter for goarch (a GOARCH value), as the bytes
// bwrap reads from --seccomp FD (struct sock_filter, native byte order). An architecture
// without a filter is an error: network deny then fails closed.
func NetworkFilter(goarch string) ([]byte, error) {
	a, ok := seccompArches[goarch]
	if !ok {
		return nil, fmt.Errorf("no network-deny system-call filter for architecture %s", goarch)
	}
	prog := networkProgram(a)
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.LittleEndian.AppendUint16(out, in.Code)
		out = append(out, in.Jt, in.Jf)
		out = binary.LittleEndian.AppendUint32(out, in.K)
	}
	return out, nil
}

// bpf assembles a program whose jumps name labels; both jump targets must lie ahead.
type bpf struct {
	ins    []unix.SockFilter
	labels map[string]int
	fix    []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (b *bpf) label(name string) { b.labels[name] = len(b.ins) }

func (b *bpf) stmt(code uint16, k uint32) { b.ins = append(b.ins, unix.SockFilter{Code: code, K: k}) }

// jump compares the accumulator with k; "" continues with the next instruction.
func (b *bpf) jump(op uint16, k uint32, jt, jf string) {
	b.fix = append(b.fix, fixup{at: len(b.ins), jt: jt, jf: jf})
	b.ins = append(b.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (b *bpf) assemble() []unix.SockFilter {
	for _, f := range b.fix {
		b.ins[f.at].Jt = b.offset(f.at, f.jt)
		b.ins[f.at].Jf = b.offset(f.at, f.jf)
	}
	return b.ins
}

func (b *bpf) offset(at int, label string) uint8 {
	if label == "" {
		return 0
	}
	to, ok := b.labels[label]
	if !ok || to <= at || to-at-1 > 255 {
		panic(fmt.Sprintf("seccomp: bad jump from %d to %q", at, label))
	}
	return uint8(to - at - 1)
}

func networkProgram(a seccompArch) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ret = unix.BPF_RET | unix.BPF_K
	)
	b := &bpf{labels: map[string]int{}}
	b.stmt(ld, offArch)
	b.jump(unix.BPF_JEQ, a.audit, "", "deny")
	b.stmt(ld, offNr)
	if a.x32 {
		b.jump(unix.BPF_JGE, x32SyscallBit, "deny", "")
	}
	b.jump(unix.BPF_JEQ, a.connect, "deny", "")
	b.jump(unix.BPF_JEQ, a.socket, "family", "")
	b.jump(unix.BPF_JEQ, a.socketpair, "family", "")
	b.jump(unix.BPF_JEQ, a.ioUringSetup, "deny", "")
	b.jump(unix.BPF_JEQ, a.ioUringEnter, "deny", "")
	b.jump(unix.BPF_JEQ, a.ioUringRegs, "deny", "")
	b.stmt(ret, retAllow)
	b.label("family")
	// The kernel reads family and type as int: the low half of the argument.
	b.stmt(ld, offArg0)
	b.jump(unix.BPF_JEQ, unix.AF_UNIX, "", "deny")
	b.stmt(ld, offArg1)
	b.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, sockTypeMask)
	b.jump(unix.BPF_JEQ, unix.SOCK_DGRAM, "deny", "")
	b.stmt(ret, retAllow)
	b.label("deny")
	b.stmt(ret, retEPERM)
	return b.assemble()
}

// filterFile returns a fresh pipe from which bwrap reads prog (bwrap reads to the end and
// closes it); the caller passes it as an extra file and closes its copy after the start.
func filterFile(prog []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// The program is far below the pipe buffer, so the write does not block.
	_, err = w.Write(prog)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// nativeNetworkFilter is NetworkFilter for this process's architecture.
func nativeNetworkFilter() ([]byte, error) { return NetworkFilter(runtime.GOARCH) }
