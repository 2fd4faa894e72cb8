#!/usr/bin/env python3
"""Independent verifier of Zuno evidence bundles (docs/formats.md, "Bundles").

Written from the specification alone, with the Python 3 standard library only: it shares no
code with Zuno. Usage:

    python3 zuno_verify.py BUNDLE... [--public-key BASE64] [--require-signature]

prints {"valid": bool, "line": L, "eventId": ..., "reason": "<code>: text"} for each bundle (one
line each, with "file" when several are given) and exits 0 when every bundle verifies, 1 when
one does not (2 for a wrong command line).

When a module receipts.py beside this file defines check_session(events), it is called with
the event records (dicts, in file order) once every chain has verified, before the seal is
checked; a result (eventId, reason) fails the bundle at that event's line.
"""

import base64
import hashlib
import json
import os
import re
import sys

FORMAT = "zuno.bundle"
VERSION = 1
SIGNED_PREFIX = b"zuno.bundle.1\n"
CHAIN_VERSION = b"zuno.chain.1"
ANCHOR_VERSIONS = ("zuno.anchor.1", "zuno.anchor.2")

# ---------------------------------------------------------------------------------------------
# Ed25519 verification (RFC 8032, section 5.1.7), cofactorless: [S]B - [k]A must encode to R.

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = (-121665 * pow(121666, P - 2, P)) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)


def _inv(x):
    return pow(x, P - 2, P)


def _recover_x(y, sign):
    """x from y and the sign bit (RFC 8032, 5.1.3); None when y is on no point."""
    u = (y * y - 1) % P
    v = (D * y * y + 1) % P
    x = (u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P)) % P
    vx2 = (v * x * x) % P
    if vx2 == u % P:
        pass
    elif vx2 == (-u) % P:
        x = (x * SQRT_M1) % P
    else:
        return None
    if x & 1 != sign:
        x = (-x) % P
    return x


def _point(x, y):
    return (x, y, 1, (x * y) % P)


def _add(a, b):
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = ((y1 - x1) * (y2 - x2)) % P
    bb = ((y1 + x1) * (y2 + x2)) % P
    cc = (2 * D * t1 * t2) % P
    dd = (2 * z1 * z2) % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return ((e * f) % P, (g * h) % P, (f * g) % P, (e * h) % P)


def _mul(s, pt):
    q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            q = _add(q, pt)
        pt = _add(pt, pt)
        s >>= 1
    return q


def _encode(pt):
    x, y, z, _ = pt
    zi = _inv(z)
    x, y = (x * zi) % P, (y * zi) % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _decode(b):
    """A point from 32 bytes; a y at or above p is taken modulo p, as common decoders do."""
    n = int.from_bytes(b, "little")
    sign = n >> 255
    y = (n & ((1 << 255) - 1)) % P
    x = _recover_x(y, sign)
    if x is None:
        return None
    return _point(x, y)


_BY = (4 * _inv(5)) % P
BASE = _point(_recover_x(_BY, 0), _BY)


def ed25519_verify(public, message, signature):
    if len(public) != 32 or len(signature) != 64:
        return False
    a = _decode(public)
    if a is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % L
    minus_a = ((-a[0]) % P, a[1], a[2], (-a[3]) % P)
    r = _add(_mul(s, BASE), _mul(k, minus_a))
    return _encode(r) == signature[:32]


# ---------------------------------------------------------------------------------------------
# JSON as the specification reads it: integers are kept as their text so that only
# non-negative integers without sign, fraction or exponent are accepted; NaN and Infinity are
# not JSON.


class _Int(str):
    pass


class _Float(str):
    pass


def _no_constant(name):
    raise ValueError("not JSON: " + name)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _loads(text):
    return json.loads(text, parse_int=_Int, parse_float=_Float, parse_constant=_no_constant)


class Failure(Exception):
    def __init__(self, code, text, line=0, event=None):
        super().__init__(code + ": " + text)
        self.code, self.text, self.line, self.event = code, text, line, event


def _object(raw):
    """A JSON object from a line's bytes (UTF-8) or from a string."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Failure("bad_line", "not UTF-8")
    try:
        obj = _loads(raw)
    except (ValueError, RecursionError):
        raise Failure("bad_line", "not a JSON object")
    if type(obj) is not dict:
        raise Failure("bad_line", "not a JSON object")
    return obj


def _str(obj, key):
    v = obj.get(key)
    if type(v) is not str:
        return None
    # A lone surrogate escape decodes to U+FFFD, as in every UTF-8 JSON decoder that cannot
    # represent it.
    return _SURROGATE.sub("\ufffd", v)


_INTEGER = re.compile(r"(0|[1-9][0-9]*)")


def _uint(obj, key):
    v = obj.get(key)
    if type(v) is not _Int or not _INTEGER.fullmatch(v):
        return None
    n = int(v)
    return n if n < 2**64 else None


def _canonical_b64(s, n):
    if s is None:
        return None
    try:
        b = base64.b64decode(s.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    if len(b) != n or base64.b64encode(b).decode("ascii") != s:
        return None
    return b


# ---------------------------------------------------------------------------------------------
# The hash chain (docs/formats.md, "Hash chain").


def body_digest(event_id, stream, type_, data, metadata):
    h = hashlib.sha256()
    h.update(CHAIN_VERSION + b"\n")
    for field in (event_id, stream, type_, data, metadata):
        b = field.encode("utf-8")
        h.update(str(len(b)).encode("ascii") + b":" + b)
    return h.hexdigest()


def link(prev, revision, body):
    text = CHAIN_VERSION + b"\n" + prev.encode("ascii") + b"\n" + str(revision).encode("ascii") + b"\n" + body.encode("ascii")
    return hashlib.sha256(text).hexdigest()


_HASH_MEMBER = re.compile(r',"hash":"([0-9a-f]{64})"\}\Z')


def split_hash(md):
    m = _HASH_MEMBER.search(md)
    if m is None:
        return md, None
    return md[: m.start()] + "}", m.group(1)


# ---------------------------------------------------------------------------------------------
# The verifier: one pass, in file order, stopping at the first failure.


class Stream:
    def __init__(self):
        self.next, self.prev, self.links = 0, "", []


class Verifier:
    def __init__(self, trusted=None, require=False):
        self.trusted, self.require = trusted, require or trusted is not None
        self.header = None
        self.streams, self.order = {}, []
        self.events, self.event_lines = [], {}
        self.last_pos = None
        self.anchor = False

    def run(self, data):
        parts = data.split(b"\n")
        lines, rest = parts[:-1], parts[-1]
        offset = 0
        for i, line in enumerate(lines):
            n = i + 1
            try:
                if i == 0:
                    self.header_line(line)
                    res = None
                else:
                    res = self.line(line, data[:offset], n)
            except Failure as f:
                if f.line == 0:
                    f.line = n
                raise
            offset += len(line) + 1
            if res is not None:
                if offset != len(data):
                    raise Failure("misplaced", "something follows the seal line", n + 1)
                return res
        if rest:
            raise Failure("bad_line", "the last line does not end with a newline", len(lines) + 1)
        raise Failure("missing_seal", "the bundle ends without a seal line", len(lines) + 1)

    def header_line(self, line):
        try:
            obj = _object(line)
        except Failure as f:
            raise Failure("bad_header", f.text)
        streams = obj.get("streams")
        summaries = []
        ok = type(streams) is list
        for s in streams if ok else []:
            if type(s) is not dict:
                ok = False
                break
            name, count, head = _str(s, "stream"), _uint(s, "events"), _str(s, "head")
            if name is None or count is None or head is None:
                ok = False
                break
            summaries.append((name, count, head))
        sessions = obj.get("sessions")
        genesis = _uint(obj, "chainGenesis") if "chainGenesis" in obj else 0
        if not (
            _str(obj, "format") == FORMAT
            and _uint(obj, "version") == VERSION
            and type(sessions) is list
            and all(type(s) is str for s in sessions)
            and _str(obj, "createdAt") is not None
            and genesis is not None
            and ok
        ):
            raise Failure("bad_header", "the first line is not a %s version %d header" % (FORMAT, VERSION))
        self.header = {"streams": summaries, "genesis": genesis}

    def line(self, line, before, n):
        obj = _object(line)
        kind = _str(obj, "kind")
        if kind == "event":
            if self.anchor:
                raise Failure("misplaced", "an event after the anchor line")
            self.event(obj, n)
            return None
        if kind == "anchor":
            if self.anchor:
                raise Failure("misplaced", "a second anchor line")
            self.anchor = True
            file = _str(obj, "file")
            if file is None:
                raise Failure("bad_line", "the anchor line has no string member file")
            self.header_matches()
            self.anchor_covers(file)
            return None
        if kind == "seal":
            return self.seal(obj, before)
        raise Failure("bad_line", 'not an "event", "anchor" or "seal" line')

    def event(self, obj, n):
        ev = {k: _str(obj, k) for k in ("stream", "eventId", "type", "data", "metadata")}
        ev["position"], ev["revision"] = _uint(obj, "position"), _uint(obj, "revision")
        if any(v is None for v in ev.values()):
            raise Failure("bad_line", "an event line needs integer position and revision, and string stream, eventId, type, data and metadata")
        name = ev["stream"]
        st = self.streams.get(name)
        if st is None:
            st = self.streams[name] = Stream()
            self.order.append(name)
        if ev["revision"] != st.next:
            raise Failure("revision_gap", "revision %d of %s, where revision %d comes next" % (ev["revision"], name, st.next), event=ev)
        body, hashed = split_hash(ev["metadata"])
        computed = link(st.prev, ev["revision"], body_digest(ev["eventId"], name, ev["type"], ev["data"], body))
        if hashed is None and ev["position"] > self.header["genesis"]:
            raise Failure("unchained", "the metadata ends without a hash member, but the event is after the chain's genesis", event=ev)
        if hashed is None:
            st.prev = ""
        elif hashed != computed:
            raise Failure("chain_altered", "the hash does not match the event's content and its predecessor", event=ev)
        else:
            st.prev = computed
        if self.last_pos is not None and ev["position"] <= self.last_pos:
            raise Failure("position_order", "position %d is not after the previous event's %d" % (ev["position"], self.last_pos), event=ev)
        self.last_pos = ev["position"]
        st.next += 1
        st.links.append(computed)
        # The record as the line holds it (integers as ints), for the receipt checks.
        self.events.append(dict(ev, kind="event"))
        self.event_lines.setdefault(ev["eventId"], (n, ev))

    def header_matches(self):
        def bad(text):
            return Failure("header_mismatch", text, 1)

        seen = set()
        for name, count, head in self.header["streams"]:
            if name in seen:
                raise bad("the header names stream %s twice" % name)
            seen.add(name)
            st = self.streams.get(name)
            if st is None:
                raise bad("the header names stream %s, which has no events in the bundle" % name)
            if st.next != count:
                raise bad("the header counts %d events of %s, the bundle holds %d" % (count, name, st.next))
            if st.links[-1] != head:
                raise bad("the header's head of %s is not its last event's hash" % name)
        for name in self.order:
            if name not in seen:
                raise bad("stream %s has events in the bundle but is not in the header" % name)

    def anchor_covers(self, file):
        def bad(text):
            return Failure("anchor_mismatch", text)

        try:
            obj = _object(file)
        except Failure:
            raise bad("the anchor file is not a JSON object")
        heads = obj.get("heads")
        if _str(obj, "version") not in ANCHOR_VERSIONS or type(heads) is not list:
            raise bad("the anchor file is not a zuno.anchor.1 or zuno.anchor.2 file with a heads array")
        for h in heads:
            if type(h) is not dict:
                raise bad("an anchored head is not an object")
            name, rev, hsh = _str(h, "stream"), _uint(h, "revision"), _str(h, "hash")
            if name is None or rev is None or hsh is None:
                raise bad("an anchored head needs string stream and hash and integer revision")
            st = self.streams.get(name)
            if st is None:
                continue
            if rev >= st.next:
                raise bad("the anchor records %s at revision %d, beyond the bundle's last" % (name, rev))
            if st.links[rev] != hsh:
                raise bad("the anchor's head of %s at revision %d is not the bundle's event there" % (name, rev))

    def seal(self, obj, before):
        digest = _str(obj, "sha256")
        if digest is None or "signature" not in obj:
            raise Failure("bad_line", "the seal needs a string sha256 and a signature (null or an object)")
        sig = obj["signature"]
        key = value = None
        if sig is not None:
            bad = Failure("bad_line", 'the seal\'s signature is not {"alg":"ed25519","publicKey":base64,"value":base64}')
            if type(sig) is not dict:
                raise bad
            key, value = _canonical_b64(_str(sig, "publicKey"), 32), _canonical_b64(_str(sig, "value"), 64)
            if _str(sig, "alg") != "ed25519" or key is None or value is None:
                raise bad
        if not self.anchor:
            self.header_matches()
        self.receipts()
        if digest != hashlib.sha256(before).hexdigest():
            raise Failure("seal_digest", "the SHA-256 of the lines before the seal is not the sealed one")
        res = {"valid": True, "line": 0, "events": len(self.events), "streams": len(self.order), "signed": False}
        if sig is None:
            if self.require:
                raise Failure("signature_required", "the bundle is not signed, and a signature is required")
            return res
        if self.trusted is not None and key != self.trusted:
            raise Failure("signature_untrusted", "the bundle is signed with another key than the trusted one")
        if not ed25519_verify(key, SIGNED_PREFIX + digest.encode("utf-8"), value):
            raise Failure("signature_invalid", "the signature does not verify with its public key")
        res["signed"], res["publicKey"] = True, base64.b64encode(key).decode("ascii")
        return res

    def receipts(self):
        """The receipt checks of docs/formats/receipts.md, when receipts.py is beside this file."""
        check = _receipt_check()
        if check is None:
            return
        found = check(self.events)
        if found is None:
            return
        event_id, reason = found
        n, ev = self.event_lines.get(event_id, (0, None))
        if ":" not in reason:
            reason = "receipt_invalid: " + reason
        code, _, text = reason.partition(":")
        raise Failure(code, text.strip(), n, ev)


def _receipt_check():
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(here, "receipts.py")):
        return None
    if here not in sys.path:
        sys.path.insert(0, here)
    import receipts  # noqa: E402  (written beside this file, optional)

    return getattr(receipts, "check_session", None)


def verify(data, trusted=None, require=False):
    """The verdict on a bundle's bytes, as a dict."""
    v = Verifier(trusted, require)
    try:
        return v.run(data)
    except Failure as f:
        out = {"valid": False, "line": f.line}
        if f.event is not None:
            out["eventId"], out["stream"], out["revision"] = f.event["eventId"], f.event["stream"], f.event["revision"]
        out["reason"] = f.code + ": " + f.text
        return out


def main(argv):
    args, trusted, require = [], None, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--public-key" and i + 1 < len(argv):
            trusted = _canonical_b64(argv[i + 1], 32)
            if trusted is None:
                print("zuno_verify: --public-key is not a base64 ed25519 public key (32 bytes)", file=sys.stderr)
                return 2
            i += 2
            continue
        if a == "--require-signature":
            require = True
        elif a.startswith("-"):
            print("usage: zuno_verify.py BUNDLE... [--public-key BASE64] [--require-signature]", file=sys.stderr)
            return 2
        else:
            args.append(a)
        i += 1
    if not args:
        print("usage: zuno_verify.py BUNDLE... [--public-key BASE64] [--require-signature]", file=sys.stderr)
        return 2
    status = 0
    for path in args:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            print("zuno_verify: cannot read %s: %s" % (path, e.strerror), file=sys.stderr)
            return 2
        out = verify(data, trusted, require)
        if len(args) > 1:
            out["file"] = path
        print(json.dumps(out))
        if not out["valid"]:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
