package guard

// The session guard (docs/shell-execution.md, "The session guard"): a guard process that the
// runtime starts once and keeps, and that starts one command after another on request, so
// that no program but the command itself is executed per command. It keeps the per-command
// guard's guarantees: it is the child subreaper of each command it starts (one command at a
// time, so every descendant it has belongs to that command), it holds the lifeline (its
// socket to the runtime: when the runtime dies the kernel closes the runtime's end), the
// command gets PR_SET_PDEATHSIG(SIGKILL) from a thread locked for the guard's whole life, and
// the verdict travels on a channel the command cannot reach (the socket, which no process
// can open through /proc, of a process that is not dumpable).

// SessionName is argv[0] of a session guard.
const SessionName = "zuno-session-guard"

// SessionFD is the session guard's end of its socket to the runtime.
const SessionFD = 3

// The request frame: a header of requestHeader bytes — the body's length and the number of
// descriptors sent with the header (SCM_RIGHTS), both little-endian uint32 — then the body,
// every field ending in NUL: the version, the process-group mode (ModeSetsid or ModeSetpgid),
// the working directory, the number of arguments, the arguments, then the environment. The
// descriptors are the command's output — under requestShared one, its fd 1 and 2; under
// requestSplit two, its fd 1 then its fd 2 (the git pre-flight reads a status from standard
// output alone) — then the files it gets at fd 3, 4, …. The version names the descriptors'
// layout so that a guard that does not know it (a zuno-guard older than zuno beside it)
// refuses the request ("error invalid request") rather than mix up descriptors.
const (
	requestHeader = 8
	requestShared = "v1"
	requestSplit  = "v2"
	// maxRequestBody bounds a request's body (the kernel's own bound on argv and environment
	// together is smaller).
	maxRequestBody = 16 << 20
	// maxRequestFiles bounds the descriptors of one request: the outputs (two at most) and
	// 64 files.
	maxRequestFiles = 66
)

// Process-group modes of a request.
const (
	ModeSetpgid = "setpgid"
	ModeSetsid  = "setsid"
)

// The session guard's replies, one line each. To a request: "pid P" (the command started,
// in process group P), "error MSG" (nothing was started; the guard serves the next request),
// "busy" (nothing was started: the previous command's processes could not be cleared, and
// the guard exits), or a start failure in the per-command guard's format ("guard C MSG").
// After "pid P", one report line in that format ("exit N T", "signal N T", "guard 125 MSG").
const (
	ReplyPID   = "pid"
	ReplyError = "error"
	ReplyBusy  = "busy"
)

// ReplyInvalid is the reply to a request the guard cannot read.
const ReplyInvalid = ReplyError + " invalid request"

// EncodeRequest is a request's header and body (see the frame above); split: the command's
// fd 2 is a descriptor of its own, sent after its fd 1; nfds counts every descriptor sent.
func EncodeRequest(mode, dir string, argv, env []string, split bool, nfds int) (header, body []byte) {
	version := requestShared
	if split {
		version = requestSplit
	}
	body = append(body, version...)
	body = append(body, 0)
	for _, f := range append([]string{mode, dir, itoa(int64(len(argv)))}, argv...) {
		body = append(append(body, f...), 0)
	}
	for _, kv := range env {
		body = append(append(body, kv...), 0)
	}
	header = make([]byte, requestHeader)
	putUint32(header[0:4], uint32(len(body)))
	putUint32(header[4:8], uint32(nfds))
	return header, body
}

// request is one decoded request.
type request struct {
	setsid bool
	split  bool // the command's fd 2 is the second descriptor, not the first
	dir    string
	argv   []string
	env    []string
}

// decodeRequest parses a body; ok is false for anything EncodeRequest does not produce.
func decodeRequest(body []byte) (request, bool) {
	if len(body) == 0 || body[len(body)-1] != 0 {
		return request{}, false
	}
	fields := splitNUL(body[:len(body)-1])
	if len(fields) < 5 || (fields[0] != requestShared && fields[0] != requestSplit) {
		return request{}, false
	}
	req := request{split: fields[0] == requestSplit}
	switch fields[1] {
	case ModeSetsid:
		req.setsid = true
	case ModeSetpgid:
	default:
		return request{}, false
	}
	req.dir = fields[2]
	n, ok := atoi(fields[3])
	if !ok || n < 1 || 4+n > len(fields) || req.dir == "" || req.dir[0] != '/' || fields[4] == "" {
		return request{}, false
	}
	req.argv = fields[4 : 4+n]
	req.env = fields[4+n:]
	return req, true
}

func splitNUL(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == 0 {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return append(out, string(b[start:]))
}

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func getUint32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// pathOf is the PATH entry of env: a command's program is looked up in the command's PATH,
// as the per-command guard (which runs with the command's environment) does.
func pathOf(env []string) string {
	path := ""
	for _, kv := range env {
		if len(kv) >= 5 && kv[:5] == "PATH=" {
			path = kv[5:] // the last one wins, as in os/exec's deduplication of an environment
		}
	}
	return path
}
