#!/usr/bin/env python3
"""An independent checker of Zuno prompt receipts ("zuno receipts v1").

It implements docs/formats/receipts.md with the Python standard library only, without any of
Zuno's Go code: it folds a session's events into the conversation the model was shown,
rebuilds every prompt receipt (session.prompt.assembled.1) the session recorded, and re-derives
each digest the receipt claims.

    check_session(events) -> None | (eventId, "<reason_code>: text")

events is a list of dicts in the event-line shape

    {"kind": "event", "position": P, "stream": S, "revision": R, "eventId": ID,
     "type": T, "data": "<stored data JSON>", "metadata": "<stored metadata JSON>"}

holding every event of the sessions to check (and of the sessions they fork from), in log
position order. Every session stream ("session-<id>") in the list is checked.

Command line, for testing: python3 receipts.py EVENTS.jsonl (one event line per line).
"""

import base64
import hashlib
import json
import re
import sys

SCHEMA_VERSION = 1
ESTIMATOR = "zuno.tokens.v1"
MESSAGE_OVERHEAD_TOKENS = 4
HEADER_PREFIX = b"zuno.prompt.header.1\n"
ASSEMBLY_PREFIX = b"zuno.prompt.assembly.1\n"
CONVERSATION_PREFIX = b"zuno.prompt.conversation.1\n"
LANES = ["agent_role", "collaboration_mode", "runtime_policy", "global_agents", "project_agents", "work_state",
         "selected_skills", "skill_index", "memory"]
TRUST = ("host", "user", "project", "session")
SECTION_ROLES = ("system", "developer", "user")
FORK_DEPTH = 32

T_RECEIPT = "session.prompt.assembled.1"
T_USER = "session.user_message.appended.1"
T_REQUEST = "session.provider.request.1"
T_BLOCKED = "session.tool.blocked.1"
T_SETTLED = "session.tool.settled.1"
T_COMPACTED = "session.transcript.compacted.1"
T_FORKED = "session.forked.1"


class Invalid(Exception):
    """A receipt (or an event it depends on) that does not check: code and text."""

    def __init__(self, code, text):
        super().__init__(code + ": " + text)
        self.code, self.text = code, text


# ---------------------------------------------------------------------------------------
# JSON: decoding with Go's encoding/json semantics, encoding byte for byte as Go does.


class Pairs(list):
    """A JSON object as the ordered list of its members (duplicates kept)."""


class _Float(float):
    pass


def _reject_constant(name):
    raise ValueError("not JSON: " + name)


def loads(text):
    """Parses JSON keeping objects as Pairs and non-integer numbers marked (Go refuses them
    for integer fields)."""
    return json.loads(text, object_pairs_hook=Pairs, parse_float=_Float, parse_constant=_reject_constant)


_SURROGATE = re.compile("[\ud800-\udfff]")


def go_string(s):
    """A decoded JSON string as Go holds it: a lone surrogate escape becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", s)


def go_utf8(b):
    """Bytes as text the way Zuno's first encoding of a message reads them: every byte that
    does not begin a valid UTF-8 sequence (overlong forms, surrogates and code points above
    U+10FFFF are not valid) becomes one U+FFFD, and decoding goes on at the next byte."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                c = b[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(c) == 1:
                out.append(c)
                i += n
                break
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def _fold(name):
    return "".join(c.lower().upper() if len(c.lower().upper()) == 1 else c for c in name)


def members(obj, names):
    """Go's struct decoding: each member sets the field its key names exactly, else the field
    its key names case-insensitively; the last member wins; unknown members are ignored.
    Returns {field: raw value} for the fields set."""
    if not isinstance(obj, Pairs):
        raise ValueError("not a JSON object")
    folded = {_fold(n): n for n in names}
    out = {}
    for key, value in obj:
        key = go_string(key)
        field = key if key in names else folded.get(_fold(key))
        if field is not None:
            out[field] = value
    return out


def d_str(v, prev=""):
    if v is None:
        return prev
    if not isinstance(v, str):
        raise ValueError("want a string, got %r" % (v,))
    return go_string(v)


def d_int(v, prev=0):
    if v is None:
        return prev
    if isinstance(v, bool) or not isinstance(v, int) or isinstance(v, _Float) or not -(1 << 63) <= v < (1 << 63):
        raise ValueError("want an integer, got %r" % (v,))
    return v


def d_bool(v, prev=False):
    if v is None:
        return prev
    if not isinstance(v, bool):
        raise ValueError("want a boolean, got %r" % (v,))
    return v


def d_list(v, item):
    """A Go slice: null is nil (None), [] stays an empty list (they encode differently)."""
    if v is None:
        return None
    if not isinstance(v, list) or isinstance(v, Pairs):
        raise ValueError("want an array")
    return [item(x) for x in v]


def d_struct(v, spec):
    """A Go struct value: spec maps field -> (decoder, zero)."""
    got = members(v if v is not None else Pairs(), set(spec))
    out = {}
    for name, (dec, zero) in spec.items():
        out[name] = dec(got[name]) if name in got else (zero() if callable(zero) else zero)
    return out


def d_ptr(v, spec):
    return None if v is None else d_struct(v, spec)


def d_str_map(v):
    if v is None:
        return None
    if not isinstance(v, Pairs):
        raise ValueError("want an object")
    out = {}
    for key, value in v:
        out[go_string(key)] = d_str(value)
    return out


_CONTROL = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}
_ESCAPED = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')


def _escape(match):
    c = match.group()
    if c in _CONTROL:
        return _CONTROL[c]
    if "\ud800" <= c <= "\udfff":
        return "\\ufffd"
    return "\\u%04x" % ord(c)


def enc_str(s):
    """A string as Go's encoding/json writes it: \\" \\\\ \\b \\f \\n \\r \\t, other control
    characters and < > & as \\u00xx (lower-case hex), U+2028 and U+2029 escaped, everything
    else (all other non-ASCII) as itself in UTF-8."""
    return '"' + _ESCAPED.sub(_escape, s) + '"'


def enc_obj(members_):
    """An object from (key, encoded value, omit) triples, in struct order."""
    return "{" + ",".join(enc_str(k) + ":" + v for k, v, omit in members_ if not omit) + "}"


def enc_list(items, enc):
    if items is None:
        return "null"
    return "[" + ",".join(enc(x) for x in items) + "]"


def enc_int(n):
    return str(n)


def compact_raw(raw):
    """Go's json.Compact with HTML escaping, as json.Marshal applies it to a RawMessage: the
    whitespace between tokens removed, < > & and U+2028/U+2029 escaped; nothing else changes
    (not the numbers, not the order of members, not other escapes). raw must be valid JSON."""
    out, in_str, esc = [], False, False
    for c in raw:
        if c in "<>&":
            out.append("\\u%04x" % ord(c))
        elif c in "\u2028\u2029":
            out.append("\\u%04x" % ord(c))
        elif in_str:
            out.append(c)
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c in " \t\n\r":
            continue
        else:
            out.append(c)
            if c == '"':
                in_str = True
    return "".join(out)


def sha256_hex(b):
    return hashlib.sha256(b).hexdigest()


def digest_text(s):
    return sha256_hex(s.encode("utf-8"))


def valid_digest(s):
    return isinstance(s, str) and len(s) == 64 and all(c in "0123456789abcdef" for c in s)


# ---------------------------------------------------------------------------------------
# The token estimator zuno.tokens.v1.


def estimate_tokens(s):
    """One token per four ASCII bytes, rounded up, plus one per non-ASCII character."""
    ascii_ = len(s.encode("ascii", "ignore"))
    return (ascii_ + 3) // 4 + (len(s) - ascii_)


# ---------------------------------------------------------------------------------------
# Messages, tools and requests.

CALL = {"id": (d_str, ""), "providerId": (d_str, ""), "name": (d_str, ""), "arguments": (d_str, "")}
REASONING = {"id": (d_str, ""), "summary": (d_str, ""), "encryptedContent": (d_str, "")}
MESSAGE = {
    "role": (d_str, ""), "text": (d_str, ""),
    "toolCalls": (lambda v: d_list(v, lambda x: d_struct(x, CALL)), None),
    "toolCallId": (d_str, ""), "isError": (d_bool, False),
    "reasoning": (lambda v: d_list(v, lambda x: d_struct(x, REASONING)), None),
}


def enc_call(c):
    return enc_obj([("id", enc_str(c["id"]), False), ("providerId", enc_str(c["providerId"]), c["providerId"] == ""),
                    ("name", enc_str(c["name"]), False), ("arguments", enc_str(c["arguments"]), False)])


def enc_reasoning(r):
    return enc_obj([("id", enc_str(r["id"]), False), ("summary", enc_str(r["summary"]), r["summary"] == ""),
                    ("encryptedContent", enc_str(r["encryptedContent"]), r["encryptedContent"] == "")])


def enc_message(m):
    """A conversation message: role, then text, toolCalls, toolCallId, isError, reasoning,
    each left out when empty (false, "", no items)."""
    return enc_obj([
        ("role", enc_str(m["role"]), False),
        ("text", enc_str(m["text"]), m["text"] == ""),
        ("toolCalls", enc_list(m["toolCalls"], enc_call), not m["toolCalls"]),
        ("toolCallId", enc_str(m["toolCallId"]), m["toolCallId"] == ""),
        ("isError", "true", not m["isError"]),
        ("reasoning", enc_list(m["reasoning"], enc_reasoning), not m["reasoning"]),
    ])


def message(role, text="", tool_calls=None, tool_call_id="", is_error=False, reasoning=None):
    return {"role": role, "text": text, "toolCalls": tool_calls, "toolCallId": tool_call_id,
            "isError": is_error, "reasoning": reasoning}


def message_tokens(m):
    n = estimate_tokens(m["text"]) + estimate_tokens(m["toolCallId"])
    for c in m["toolCalls"] or []:
        n += estimate_tokens(c["id"]) + estimate_tokens(c["name"]) + estimate_tokens(c["arguments"])
    return n


def decode_message(blob):
    return d_struct(loads(blob), MESSAGE)


def decode_tool(blob):
    """A tool declaration: name, description and the schema's raw JSON text (Go keeps the
    schema as raw bytes: json.RawMessage)."""
    obj = loads(blob)
    got = members(obj, {"name", "description", "schema"})
    tool = {"name": d_str(got.get("name")), "description": d_str(got.get("description")), "schema": ""}
    if "schema" in got:
        tool["schema"] = _raw_member(blob, "schema")
    return tool


_DECODER = json.JSONDecoder(object_pairs_hook=Pairs, parse_constant=_reject_constant)


def _raw_member(text, field):
    """The raw text of the last member of text's top-level object whose key names field (as
    members() matches keys)."""
    i, n, raw = 0, len(text), None

    def ws(j):
        while j < n and text[j] in " \t\n\r":
            j += 1
        return j

    i = ws(i)
    if i >= n or text[i] != "{":
        raise ValueError("not an object")
    i = ws(i + 1)
    if i < n and text[i] == "}":
        return raw
    while True:
        key, i = _DECODER.raw_decode(text, i)
        i = ws(i)
        if text[i] != ":":
            raise ValueError("want ':'")
        i = ws(i + 1)
        _, end = _DECODER.raw_decode(text, i)
        if isinstance(key, str) and (key == field or (_fold(go_string(key)) == _fold(field))):
            raw = text[i:end]
        i = ws(end)
        if text[i] == ",":
            i = ws(i + 1)
            continue
        if text[i] == "}":
            return raw
        raise ValueError("want ',' or '}'")


def enc_tool(t):
    return enc_obj([("name", enc_str(t["name"]), False),
                    ("description", enc_str(t["description"]), t["description"] == ""),
                    ("schema", compact_raw(t["schema"]), t["schema"] == "")])


def tool_tokens(t):
    return estimate_tokens(t["name"]) + estimate_tokens(t["description"]) + estimate_tokens(t["schema"])


def enc_request(model, messages, tools, mode, name, max_tokens):
    return enc_obj([
        ("model", enc_str(model), False),
        ("messages", enc_list(messages, enc_message), False),
        ("tools", enc_list(tools, enc_tool), not tools),
        ("toolChoice", enc_obj([("mode", enc_str(mode), mode == ""), ("name", enc_str(name), name == "")]),
         mode == "" and name == ""),
        ("maxTokens", enc_int(max_tokens), max_tokens == 0),
    ])


# ---------------------------------------------------------------------------------------
# Receipts.

SECTION = {"id": (d_str, ""), "order": (d_int, 0), "lane": (d_str, ""), "source": (d_str, ""), "role": (d_str, ""),
           "trust": (d_str, ""), "priority": (d_int, 0), "bytes": (d_int, 0), "estimatedTokens": (d_int, 0),
           "sha256": (d_str, ""), "sourceSha256": (d_str, "")}
PART = {"kind": (d_str, ""), "section": (d_str, ""), "role": (d_str, ""), "name": (d_str, ""), "bytes": (d_int, 0),
        "estimatedTokens": (d_int, 0), "sha256": (d_str, "")}
COUNTS = {"planSteps": (d_int, 0), "todos": (d_int, 0), "jobs": (d_int, 0), "reports": (d_int, 0)}
WORK_STATE = {"bytes": (d_int, 0), "textLimit": (d_int, 0), "truncatedFields": (d_int, 0),
              "shown": (lambda v: d_struct(v, COUNTS), lambda: d_struct(None, COUNTS)),
              "omitted": (lambda v: d_struct(v, COUNTS), lambda: d_struct(None, COUNTS))}
HOOKS = {"ran": (lambda v: d_list(v, d_str), None), "removedTools": (lambda v: d_list(v, d_str), None)}
CONV_BASE = {"receiptId": (d_str, ""), "parts": (d_int, 0), "digest": (d_str, "")}
HEADER_BASE = {"receiptId": (d_str, ""), "digest": (d_str, "")}
RESUME = {"parts": (d_int, 0), "sha256State": (d_str, "")}


def _parts(v):
    return d_list(v, lambda x: d_struct(x, PART))


RECEIPT = {
    "sessionId": (d_str, ""), "receiptId": (d_str, ""), "jobsRead": (d_int, 0),
    "schemaVersion": (d_int, 0), "estimator": (d_str, ""), "model": (d_str, ""), "contextWindow": (d_int, 0),
    "maxTokens": (d_int, 0), "estimatedInputTokens": (d_int, 0),
    "sections": (lambda v: d_list(v, lambda x: d_struct(x, SECTION)), None),
    "messages": (_parts, None), "tools": (_parts, None),
    "toolChoiceMode": (d_str, ""), "toolChoiceName": (d_str, ""),
    "hooks": (lambda v: d_struct(v, HOOKS), lambda: d_struct(None, HOOKS)),
    "workState": (lambda v: d_ptr(v, WORK_STATE), None),
    "conversationDigest": (d_str, ""),
    "conversationBase": (lambda v: d_ptr(v, CONV_BASE), None),
    "loggedParts": (d_int, 0),
    "headerBase": (lambda v: d_ptr(v, HEADER_BASE), None),
    "resume": (lambda v: d_ptr(v, RESUME), None),
    "assemblyDigest": (d_str, ""), "actualDigest": (d_str, ""),
    "blobs": (d_str_map, None),
}


def enc_section(s):
    return enc_obj([("id", enc_str(s["id"]), False), ("order", enc_int(s["order"]), False),
                    ("lane", enc_str(s["lane"]), False), ("source", enc_str(s["source"]), False),
                    ("role", enc_str(s["role"]), False), ("trust", enc_str(s["trust"]), False),
                    ("priority", enc_int(s["priority"]), False), ("bytes", enc_int(s["bytes"]), False),
                    ("estimatedTokens", enc_int(s["estimatedTokens"]), False), ("sha256", enc_str(s["sha256"]), False),
                    ("sourceSha256", enc_str(s["sourceSha256"]), s["sourceSha256"] == "")])


def enc_part(p):
    return enc_obj([("kind", enc_str(p["kind"]), False), ("section", enc_str(p["section"]), p["section"] == ""),
                    ("role", enc_str(p["role"]), p["role"] == ""), ("name", enc_str(p["name"]), p["name"] == ""),
                    ("bytes", enc_int(p["bytes"]), False), ("estimatedTokens", enc_int(p["estimatedTokens"]), False),
                    ("sha256", enc_str(p["sha256"]), False)])


def enc_counts(c):
    return enc_obj([(k, enc_int(c[k]), False) for k in ("planSteps", "todos", "jobs", "reports")])


def enc_work_state(w):
    return enc_obj([("bytes", enc_int(w["bytes"]), False), ("textLimit", enc_int(w["textLimit"]), w["textLimit"] == 0),
                    ("truncatedFields", enc_int(w["truncatedFields"]), w["truncatedFields"] == 0),
                    ("shown", enc_counts(w["shown"]), False), ("omitted", enc_counts(w["omitted"]), False)])


def enc_hooks(h):
    return enc_obj([("ran", enc_list(h["ran"], enc_str), not h["ran"]),
                    ("removedTools", enc_list(h["removedTools"], enc_str), not h["removedTools"])])


def _head(lst, n):
    """Go's lst[:n] of a slice (nil stays nil)."""
    return None if lst is None else lst[:n]


def _len(lst):
    return 0 if lst is None else len(lst)


def header_digest(r):
    """sha256 of "zuno.prompt.header.1\\n" + {"sections":…,"messages":<the section
    messages>,"tools":…}."""
    n = min(_len(r["sections"]), _len(r["messages"]))
    body = enc_obj([("sections", enc_list(r["sections"], enc_section), False),
                    ("messages", enc_list(_head(r["messages"], n), enc_part), False),
                    ("tools", enc_list(r["tools"], enc_part), False)])
    return sha256_hex(HEADER_PREFIX + body.encode("utf-8"))


def assembly_digest(r):
    """sha256 of "zuno.prompt.assembly.1\\n" + the receipt's JSON with the two digests
    emptied, the blobs null, the bases and loggedParts left out, and the messages cut to the
    section messages."""
    n = min(_len(r["messages"]), _len(r["sections"]))
    body = enc_obj([
        ("schemaVersion", enc_int(r["schemaVersion"]), False),
        ("estimator", enc_str(r["estimator"]), False),
        ("model", enc_str(r["model"]), False),
        ("contextWindow", enc_int(r["contextWindow"]), r["contextWindow"] == 0),
        ("maxTokens", enc_int(r["maxTokens"]), r["maxTokens"] == 0),
        ("estimatedInputTokens", enc_int(r["estimatedInputTokens"]), False),
        ("sections", enc_list(r["sections"], enc_section), False),
        ("messages", enc_list(_head(r["messages"], n), enc_part), False),
        ("tools", enc_list(r["tools"], enc_part), False),
        ("toolChoiceMode", enc_str(r["toolChoiceMode"]), r["toolChoiceMode"] == ""),
        ("toolChoiceName", enc_str(r["toolChoiceName"]), r["toolChoiceName"] == ""),
        ("hooks", enc_hooks(r["hooks"]), False),
        ("workState", enc_work_state(r["workState"]) if r["workState"] else "", r["workState"] is None),
        ("conversationDigest", enc_str(r["conversationDigest"]), r["conversationDigest"] == ""),
        ("assemblyDigest", '""', False),
        ("actualDigest", '""', False),
        ("blobs", "null", False),
    ])
    return sha256_hex(ASSEMBLY_PREFIX + body.encode("utf-8"))


def chain_next(prev, part):
    """One link of the conversation chain: sha256("zuno.prompt.conversation.1\\n" + prev +
    "\\n" + the part's JSON)."""
    return sha256_hex(CONVERSATION_PREFIX + prev.encode("ascii", "replace") + b"\n" + enc_part(part).encode("utf-8"))


def conversation_digest(parts):
    chain = ""
    for p in parts:
        chain = chain_next(chain, p)
    return chain


def message_part(m):
    """A transcript message as a receipt lists it: its canonical blob and its part."""
    blob = enc_message(m)
    part = {"kind": "message", "section": "", "role": m["role"], "name": "", "bytes": len(blob.encode("utf-8")),
            "estimatedTokens": message_tokens(m), "sha256": digest_text(blob)}
    return part, blob


# ---------------------------------------------------------------------------------------
# Expanding a stored receipt (its header base, its conversation base chain, the transcript's
# messages it leaves out).


def _base_error(code, ident, want, got):
    return Invalid(code, "receipt %s: want %s, got %s" % (json.dumps(ident), want, got))


def restore_header(r, lookup):
    hb = r["headerBase"]
    if hb is None:
        return r
    ident = hb["receiptId"]
    if _len(r["sections"]) + _len(r["tools"]) > 0:
        raise _base_error("header_base", ident, "no sections or tools beside a header base",
                          "%d sections, %d tools" % (_len(r["sections"]), _len(r["tools"])))
    base, seen = r, set()
    while base["headerBase"] is not None:
        bid = base["headerBase"]["receiptId"]
        if bid in seen:
            raise _base_error("header_base", ident, "a chain of earlier receipts", "a cycle")
        seen.add(bid)
        nxt = lookup(bid)
        if nxt is None:
            raise _base_error("header_base", ident, "the base receipt %s in the log" % bid, "missing")
        base = nxt
    got = header_digest(base)
    if got != hb["digest"]:
        raise _base_error("header_base", ident, hb["digest"], got)
    n = min(_len(base["sections"]), _len(base["messages"]))
    out = dict(r)
    out["sections"] = None if base["sections"] is None else list(base["sections"])
    out["tools"] = None if base["tools"] is None else list(base["tools"])
    head = _head(base["messages"], n)
    out["messages"] = _concat(head, r["messages"])
    out["headerBase"] = None
    return out


def _concat(a, b):
    """Go's append(slices.Clone(a), b...): nil only when a is nil and b adds nothing."""
    if a is None and not b:
        return None
    return list(a or []) + list(b or [])


def expand(r, lookup, pool, logged):
    """The receipt whole: header restored, conversation rebuilt from its base chain and the
    transcript's messages (logged: their parts), blobs gathered."""
    r = restore_header(r, lookup)
    chain, seen, cur = [r], set(), r
    while cur["conversationBase"] is not None:
        bid = cur["conversationBase"]["receiptId"]
        if bid in seen:
            raise _base_error("conversation_base", bid, "a chain of earlier receipts", "a cycle")
        seen.add(bid)
        base = lookup(bid)
        if base is None:
            raise _base_error("conversation_base", bid, "the base receipt in the log", "missing")
        chain.append(base)
        cur = base
    blobs, conv = {}, []
    for i in range(len(chain) - 1, -1, -1):
        c = chain[i]
        b = c["conversationBase"]
        if b is not None:
            if b["parts"] < 0 or b["parts"] > len(conv):
                raise _base_error("conversation_base", b["receiptId"], "at most %d parts" % len(conv), str(b["parts"]))
            got = conversation_digest(conv[:b["parts"]])
            if got != b["digest"]:
                raise _base_error("conversation_base", b["receiptId"], b["digest"], got)
            conv = conv[:b["parts"]]
        else:
            conv = []
        k = c["loggedParts"]
        if k != 0:
            start = len(conv)
            if k < 0 or start + k > len(logged):
                raise _base_error("conversation_base", "transcript", "messages %d to %d of the transcript" % (start, start + k),
                                  "%d messages" % len(logged))
            conv = conv + logged[start:start + k]
        conv = conv + (c["messages"] or [])[min(_len(c["sections"]), _len(c["messages"])):]
        for d, blob in (c["blobs"] or {}).items():
            if d not in blobs or i == 0:
                blobs[d] = blob
    out = dict(r)
    out["messages"] = _concat(_head(r["messages"], min(_len(r["sections"]), _len(r["messages"]))), conv)
    out["conversationBase"], out["loggedParts"] = None, 0
    held = {}
    for d in [s["sha256"] for s in out["sections"] or []] + [p["sha256"] for p in (out["messages"] or []) + (out["tools"] or [])]:
        if d in blobs:
            held[d] = blobs[d]
        else:
            b = pool(d)
            if b is not None:
                held[d] = b
    held.update(r["blobs"] or {})
    out["blobs"] = held
    return out


# ---------------------------------------------------------------------------------------
# Verifying an expanded receipt (every mismatch, in a fixed order; the first is reported).


def _canonical(blob, decode, encode):
    try:
        v = decode(blob)
        return v if encode(v) == blob else None
    except (ValueError, TypeError, KeyError, IndexError):
        return None


def verify(r):
    """The mismatches of an expanded receipt: [(code, text)], empty when it checks."""
    ms, used = [], set()

    def add(code, subject, index, ident, want="", got=""):
        where = subject + ("[%d]" % index if index >= 0 else "") + (" " + json.dumps(ident) if ident else "")
        ms.append((code, "%s: %s%s" % (where, code, " (want %r, got %r)" % (want[:80], got[:80]) if want or got else "")))

    blobs = r["blobs"] or {}

    def blob(subject, index, ident, d):
        used.add(d)
        if d not in blobs:
            add("blob_missing", subject, index, ident, d, "")
            return None
        return blobs[d]

    def check_content(subject, i, ident, claimed, content, bytes_claimed, tokens_claimed, tokens):
        if digest_text(content) != claimed:
            add("digest", subject, i, ident, claimed, digest_text(content))
        if len(content.encode("utf-8")) != bytes_claimed:
            add("bytes", subject, i, ident, str(len(content.encode("utf-8"))), str(bytes_claimed))
        if tokens != tokens_claimed:
            add("estimated_tokens", subject, i, ident, str(tokens), str(tokens_claimed))

    if r["schemaVersion"] != SCHEMA_VERSION:
        add("schema_version", "receipt", -1, "", str(SCHEMA_VERSION), str(r["schemaVersion"]))
    if r["estimator"] != ESTIMATOR:
        add("estimator", "receipt", -1, "", ESTIMATOR, r["estimator"])
    keys = sorted(blobs, key=lambda k: k.encode("utf-8"))
    for k in keys:
        if not valid_digest(k):
            add("blob_key", "blob", -1, k, "lower-case hex SHA-256", k)
        elif digest_text(blobs[k]) != k:
            add("blob_digest", "blob", -1, k, k, digest_text(blobs[k]))

    sections = r["sections"] or []
    ids, last_lane = set(), -1
    for i, s in enumerate(sections):
        if s["id"] == "" or s["id"] in ids:
            add("id", "section", i, s["id"], "a unique non-empty id", s["id"])
        ids.add(s["id"])
        if s["order"] != i:
            add("order", "section", i, s["id"], str(i), str(s["order"]))
        rank = LANES.index(s["lane"]) if s["lane"] in LANES else None
        if rank is None or rank < last_lane:
            add("lane", "section", i, s["id"], "a lane at or after the previous", s["lane"])
        else:
            last_lane = rank
        if s["role"] not in SECTION_ROLES:
            add("role", "section", i, s["id"], "system, developer or user", s["role"])
        if s["trust"] not in TRUST:
            add("trust", "section", i, s["id"], "host, user, project or session", s["trust"])
        if s["sourceSha256"] != "" and not valid_digest(s["sourceSha256"]):
            add("source_digest", "section", i, s["id"], "lower-case hex SHA-256", s["sourceSha256"])
        content = blob("section", i, s["id"], s["sha256"])
        if content is not None:
            check_content("section", i, s["id"], s["sha256"], content, s["bytes"], s["estimatedTokens"], estimate_tokens(content))

    parts = r["messages"] or []
    for i, p in enumerate(parts):
        if i < len(sections):
            s = sections[i]
            if p["kind"] != "section" or p["section"] != s["id"]:
                add("section_ref", "message", i, p["section"], "section " + s["id"], p["kind"] + " " + p["section"])
                continue
            if p["role"] != s["role"]:
                add("role", "message", i, p["section"], s["role"], p["role"])
            if p["sha256"] != s["sha256"] or p["bytes"] != s["bytes"] or p["estimatedTokens"] != s["estimatedTokens"]:
                add("digest", "message", i, p["section"], s["sha256"], p["sha256"])
            continue
        if p["kind"] != "message":
            add("kind", "message", i, p["section"], "message", p["kind"])
            continue
        raw = blob("message", i, "", p["sha256"])
        if raw is None:
            continue
        m = _canonical(raw, decode_message, enc_message)
        if m is None:
            add("blob_not_canonical", "message", i, p["sha256"], "the JSON encoding of a message", raw[:40])
            continue
        if m["role"] != p["role"]:
            add("role", "message", i, "", m["role"], p["role"])
        check_content("message", i, "", p["sha256"], raw, p["bytes"], p["estimatedTokens"], message_tokens(m))
    for i in range(len(parts), len(sections)):
        add("section_ref", "message", i, sections[i]["id"], "section " + sections[i]["id"], "")

    for i, p in enumerate(r["tools"] or []):
        if p["kind"] != "tool":
            add("kind", "tool", i, p["name"], "tool", p["kind"])
            continue
        raw = blob("tool", i, p["name"], p["sha256"])
        if raw is None:
            continue
        t = _canonical(raw, decode_tool, enc_tool)
        if t is None:
            add("blob_not_canonical", "tool", i, p["name"], "the JSON encoding of a tool", raw[:40])
            continue
        if t["name"] != p["name"]:
            add("name", "tool", i, p["name"], t["name"], p["name"])
        check_content("tool", i, p["name"], p["sha256"], raw, p["bytes"], p["estimatedTokens"], tool_tokens(t))

    for k in keys:
        if k not in used:
            add("blob_unreferenced", "blob", -1, k)
    if r["conversationBase"] is not None:
        add("conversation_base", "receipt", -1, r["conversationBase"]["receiptId"], "an expanded receipt", "a receipt relative to another")
    if r["headerBase"] is not None:
        add("header_base", "receipt", -1, r["headerBase"]["receiptId"], "an expanded receipt", "a receipt relative to another")
    if r["loggedParts"] != 0:
        add("conversation_base", "receipt", -1, "transcript", "an expanded receipt", "a receipt that leaves out its transcript's messages")
    got = conversation_digest(parts[min(len(parts), len(sections)):])
    if got != r["conversationDigest"]:
        add("conversation_digest", "receipt", -1, "", got, r["conversationDigest"])
    estimate = sum(s["estimatedTokens"] for s in sections) + sum(p["estimatedTokens"] for p in parts if p["kind"] != "section") \
        + sum(p["estimatedTokens"] for p in r["tools"] or []) + MESSAGE_OVERHEAD_TOKENS * len(parts)
    if estimate != r["estimatedInputTokens"]:
        add("estimated_input_tokens", "receipt", -1, "", str(estimate), str(r["estimatedInputTokens"]))
    got = assembly_digest(r)
    if got != r["assemblyDigest"]:
        add("assembly_digest", "receipt", -1, "", got, r["assemblyDigest"])
    try:
        body = request_bytes(r)
        got = sha256_hex(body)
        if got != r["actualDigest"]:
            add("actual_digest", "receipt", -1, "", got, r["actualDigest"])
        resume = r.get("resume")
        if resume is not None:
            conv = _len(r["messages"]) - min(_len(r["sections"]), _len(r["messages"]))
            if resume["parts"] != conv or conv == 0:
                add("resume_state", "receipt", -1, "parts", str(conv), str(resume["parts"]))
            else:
                # The request JSON up to the "]" that closes its messages (receipts.md §13).
                end = body.rindex(b"]", 0, len(_request_head(r["model"])) + len(request_messages_json(r)))
                state = sha256_state(body[:end])
                if state != resume["sha256State"]:
                    add("resume_state", "receipt", -1, "sha256State", state, resume["sha256State"])
    except Invalid as e:
        add("not_reconstructible", "receipt", -1, "", "", e.text)
    return ms


def _request_head(model):
    return ('{"model":' + enc_str(model) + ',"messages":').encode("utf-8")


def request_messages_json(r):
    """The request JSON's messages array, as request_bytes encodes it."""
    msgs, _ = request_lists(r)
    return enc_list(msgs if msgs else None, enc_message).encode("utf-8")


# SHA-256's round constants and initial chaining value (FIPS 180-4 §4.2.2, §5.3.3).
_K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]
_H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]


def _rotr(x, n):
    return ((x >> n) | (x << (32 - n))) & 0xffffffff


def _compress(h, block):
    w = [int.from_bytes(block[i:i + 4], "big") for i in range(0, 64, 4)]
    for i in range(16, 64):
        s0 = _rotr(w[i - 15], 7) ^ _rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
        s1 = _rotr(w[i - 2], 17) ^ _rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
        w.append((w[i - 16] + s0 + w[i - 7] + s1) & 0xffffffff)
    a, b, c, d, e, f, g, hh = h
    for i in range(64):
        t1 = (hh + (_rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25)) + ((e & f) ^ (~e & g)) + _K[i] + w[i]) & 0xffffffff
        t2 = ((_rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) & 0xffffffff
        a, b, c, d, e, f, g, hh = (t1 + t2) & 0xffffffff, a, b, c, (d + t1) & 0xffffffff, e, f, g
    return [(x + y) & 0xffffffff for x, y in zip(h, [a, b, c, d, e, f, g, hh])]


def sha256_state(prefix):
    """SHA-256's state after prefix, as Go's crypto/sha256 MarshalBinary writes it, in base64
    (receipts.md §13): "sha\\x03", the chaining value, the pending block, the length."""
    n = len(prefix)
    full = n - n % 64
    h = _H0
    for i in range(0, full, 64):
        h = _compress(h, prefix[i:i + 64])
    pending = prefix[full:] + b"\0" * (64 - (n - full))
    state = b"sha\x03" + b"".join(x.to_bytes(4, "big") for x in h) + pending + n.to_bytes(8, "big")
    return base64.b64encode(state).decode("ascii")


def request_bytes(r):
    """The provider-visible request rebuilt from the receipt's blobs, as the bytes the
    actualDigest covers."""
    msgs, tools = request_lists(r)
    body = enc_request(r["model"], msgs if msgs else None, tools, r["toolChoiceMode"], r["toolChoiceName"], r["maxTokens"])
    return body.encode("utf-8")


def request_lists(r):
    """The request's messages and tools, decoded from the receipt's blobs."""
    blobs = r["blobs"] or {}
    by_id = {s["id"]: s for s in r["sections"] or []}
    msgs, tools = [], []
    for i, p in enumerate(r["messages"] or []):
        if p["kind"] == "section":
            s = by_id.get(p["section"])
            if s is None or s["sha256"] not in blobs:
                raise Invalid("not_reconstructible", "message[%d]: section %s or its blob is missing" % (i, p["section"]))
            msgs.append(message(s["role"], blobs[s["sha256"]]))
        elif p["kind"] == "message":
            if p["sha256"] not in blobs:
                raise Invalid("not_reconstructible", "message[%d]: blob missing" % i)
            try:
                msgs.append(decode_message(blobs[p["sha256"]]))
            except ValueError as e:
                raise Invalid("not_reconstructible", "message[%d]: %s" % (i, e))
        else:
            raise Invalid("not_reconstructible", "message[%d]: kind %s" % (i, p["kind"]))
    for i, p in enumerate(r["tools"] or []):
        if p["sha256"] not in blobs:
            raise Invalid("not_reconstructible", "tool[%d]: blob missing" % i)
        try:
            tools.append(decode_tool(blobs[p["sha256"]]))
        except ValueError as e:
            raise Invalid("not_reconstructible", "tool[%d]: %s" % (i, e))
    return msgs, tools


# ---------------------------------------------------------------------------------------
# The transcript: a session's events as the conversation the model is shown.


class Transcript:
    def __init__(self):
        self.messages = []
        self.results = {}  # call id -> slot of its result
        self.window = 0

    def evolve(self, type_, data):
        if type_ == T_USER:
            d = d_struct(data, {"text": (d_str, "")})
            self.messages.append(message("user", d["text"]))
        elif type_ == T_REQUEST:
            self._request(data)
        elif type_ == T_BLOCKED:
            d = d_struct(data, {"callId": (d_str, ""), "output": (d_str, "")})
            self._result(d["callId"], d["output"], True)
        elif type_ == T_SETTLED:
            d = d_struct(data, {"callId": (d_str, ""), "output": (d_str, ""), "outcome": (d_str, "")})
            self._result(d["callId"], d["output"], d["outcome"] != "completed")
        elif type_ == T_COMPACTED:
            d = d_struct(data, {"through": (d_int, 0), "summaryMessage": (d_str, ""), "window": (d_int, 0)})
            self.messages = [message("user", d["summaryMessage"])] + self.messages[d["through"]:]
            self.window = d["window"]

    def _request(self, data):
        response = {"text": (d_str, ""), "toolCalls": (lambda v: d_list(v, lambda x: d_struct(x, CALL)), None),
                    "reasoning": (lambda v: d_list(v, lambda x: d_struct(x, REASONING)), None)}
        d = d_struct(data, {"status": (d_str, ""), "purpose": (d_str, ""), "response": (lambda v: d_ptr(v, response), None)})
        if d["status"] != "completed" or d["response"] is None or d["purpose"] == "compaction":
            return  # a started or failed request, or a compaction's summary, adds no message
        resp = d["response"]
        calls = [dict(c) for c in resp["toolCalls"] or []]
        reasoning = [dict(x) for x in resp["reasoning"] or []] or None
        if resp["text"] != "" or calls:
            self.messages.append(message("assistant", resp["text"], calls or None, reasoning=reasoning))
        for c in calls:
            self.results[c["id"]] = len(self.messages)
            self.messages.append(message("tool", tool_call_id=c["id"]))

    def _result(self, call_id, output, is_error):
        i = self.results.pop(call_id, None)
        if i is None:
            return
        m = dict(self.messages[i])
        m["text"], m["isError"] = output, is_error
        self.messages[i] = m


# ---------------------------------------------------------------------------------------
# Sessions.


def _data(ev):
    try:
        return loads(ev["data"])
    except (ValueError, TypeError, KeyError) as e:
        raise Invalid("event_undecodable", "event %s: data is not JSON: %s" % (ev.get("eventId"), e))


class _Stream:
    """A session stream folded with the history it forks from."""

    def __init__(self, by_stream):
        self.by_stream = by_stream
        self.tr = Transcript()
        self.receipts = {}  # receipt id -> stored receipt
        self.pool = {}  # every blob of every receipt, first seen wins
        self.views = {}  # receipt id -> the transcript's messages when it was recorded
        self.own = []  # (event id, receipt id) of the stream's own receipts, in order

    def fold(self, stream, upto=None, depth=0, own=True, pinned=None):
        """Folds stream's events (up to revision upto, for a fork's history, whose last
        event must carry the chain link pinned)."""
        if depth > FORK_DEPTH:
            raise Invalid("fork_source", "%s is more than %d forks deep" % (stream, FORK_DEPTH))
        found, prev = False, ""
        for ev in self.by_stream.get(stream, []):
            rev = ev.get("revision")
            if upto is not None and rev > upto:
                break
            if upto is not None:
                prev = _check_link(ev, prev, stream, upto)
                if rev == upto and prev != pinned:
                    raise Invalid("fork_source", "the fork's history ends at %s revision %d, which no longer carries "
                                  "the hash the fork recorded" % (stream, upto))
            found = found or rev == upto
            data = _data(ev)
            try:
                self._one(ev, data, depth, own and upto is None)
            except (ValueError, TypeError) as e:
                raise Invalid("event_undecodable", "event %s (%s): %s" % (ev.get("eventId"), ev.get("type"), e))
        if upto is not None and not found:
            raise Invalid("fork_source", "the fork's history ends at %s revision %d, which is not in the events" % (stream, upto))

    def _one(self, ev, data, depth, own):
        type_ = ev.get("type")
        if type_ == T_FORKED and ev.get("revision") == 0:
            src = d_struct(data, {"source": (lambda v: d_struct(v, {"stream": (d_str, ""), "revision": (d_int, 0), "hash": (d_str, "")}),
                                             lambda: {"stream": "", "revision": 0, "hash": ""})})["source"]
            self.fold(src["stream"], src["revision"], depth + 1, own=False, pinned=src["hash"])
        if type_ == T_RECEIPT:
            r = d_struct(data, RECEIPT)
            self.receipts[r["receiptId"]] = r
            for d, b in (r["blobs"] or {}).items():
                self.pool.setdefault(d, b)
            self.views[r["receiptId"]] = list(self.tr.messages)
            if own:
                self.own.append((ev.get("eventId"), r["receiptId"]))
        self.tr.evolve(type_, data)


CHAIN_VERSION = "zuno.chain.1"
METADATA = ("commandId", "commandDigest", "causationId", "correlationId", "actor", "time")


def _check_link(ev, prev, stream, upto):
    """A fork's history is folded only while each event still carries its link in its
    stream's hash chain (docs/storage.md, "Hash chain"; its rules are docs/formats.md's): an
    event without a link is older than the chain and restarts it. Returns the event's link."""
    try:
        md = d_struct(loads(ev["metadata"]), {k: (d_str, "") for k in METADATA + ("hash",)})
    except (ValueError, TypeError, KeyError) as e:
        raise Invalid("fork_source", "event %s of the fork's history has unreadable metadata: %s" % (ev.get("eventId"), e))
    if md["hash"] == "":
        return ""
    meta = enc_obj([(k, enc_str(md[k]), k in ("commandDigest", "causationId", "correlationId") and md[k] == "")
                    for k in METADATA]).encode("utf-8")
    h = hashlib.sha256((CHAIN_VERSION + "\n").encode())
    for field in (ev["eventId"].encode("utf-8"), stream.encode("utf-8"), ev["type"].encode("utf-8"),
                  ev["data"].encode("utf-8"), meta):
        h.update(b"%d:" % len(field))
        h.update(field)
    link = sha256_hex(("%s\n%s\n%d\n%s" % (CHAIN_VERSION, prev, ev["revision"], h.hexdigest())).encode("utf-8"))
    if link != md["hash"]:
        raise Invalid("fork_source", "the fork's history ends at %s revision %d, which has a history changed since the "
                      "fork (revision %d no longer matches its hash)" % (stream, upto, ev["revision"]))
    return link


def _sessions(events):
    by_stream, order = {}, []
    for ev in events:
        s = ev.get("stream", "")
        if s not in by_stream:
            by_stream[s] = []
            if s.startswith("session-"):
                order.append(s)
        by_stream[s].append(ev)
    for evs in by_stream.values():
        evs.sort(key=lambda e: e.get("revision", 0))
    return by_stream, order


def check_stream(by_stream, stream):
    """Every receipt of one session stream: [(event id, receipt id, expanded receipt or None,
    None or (code, text))]."""
    f = _Stream(by_stream)
    f.fold(stream)
    out = []
    encoded = {}  # id(message) -> (message, part, blob): the views share their messages
    for event_id, rid in f.own:
        try:
            logged, blobs = [], {}
            for m in f.views[rid]:
                hit = encoded.get(id(m))
                if hit is None or hit[0] is not m:
                    hit = encoded[id(m)] = (m,) + message_part(m)
                _, part, blob = hit
                logged.append(part)
                blobs.setdefault(part["sha256"], blob)

            def pool(d):
                if d in f.pool:
                    return f.pool[d]
                return blobs.get(d)

            full = expand(f.receipts[rid], lambda i: f.receipts.get(i), pool, logged)
            ms = verify(full)
            resume = full.get("resume")
            conv = (full["messages"] or [])[min(_len(full["sections"]), _len(full["messages"])):]
            if not ms and resume is not None and (len(logged) != resume["parts"] or conv != logged):
                # A checkpoint's parts are the transcript's messages, all of them (§13).
                ms = [("resume_state", "receipt: the conversation (%d parts) is not the transcript's %d messages"
                       % (len(conv), len(logged)))]
            out.append((event_id, rid, full, ms[0] if ms else None))
        except Invalid as e:
            out.append((event_id, rid, None, (e.code, e.text)))
    return out


def receipt_results(events):
    """Every receipt of every session stream in events, checked: a list of dicts with eventId,
    receiptId, ok, reason and, when the receipt expands, its digests."""
    by_stream, order = _sessions(events)
    results = []
    for stream in order:
        try:
            checked = check_stream(by_stream, stream)
        except Invalid as e:
            first = next((ev for ev in by_stream[stream] if ev.get("type") == T_RECEIPT), by_stream[stream][0])
            results.append({"eventId": first.get("eventId"), "stream": stream, "ok": False, "reason": "%s: %s" % (e.code, e.text)})
            continue
        for event_id, rid, full, failure in checked:
            res = {"eventId": event_id, "stream": stream, "receiptId": rid, "ok": failure is None,
                   "reason": None if failure is None else "%s: %s" % failure}
            if full is not None:
                res.update(headerDigest=header_digest(full), conversationDigest=conversation_digest(
                    (full["messages"] or [])[min(_len(full["messages"]), _len(full["sections"])):]),
                    assemblyDigest=assembly_digest(full), actualDigest=sha256_hex(request_bytes(full)) if failure is None else None,
                    messages=_len(full["messages"]), estimatedInputTokens=full["estimatedInputTokens"])
            results.append(res)
    return results


def check_session(events):
    """None when every receipt of the sessions in events checks, else (eventId, "<code>: text")
    for the first that does not (log order within each session, sessions in order of first
    appearance)."""
    for res in receipt_results(events):
        if not res["ok"]:
            return res["eventId"], res["reason"]
    return None


def read_lines(path):
    events = []
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            ev = json.loads(line.decode("utf-8", "replace"))
            if ev.get("kind") == "event":
                events.append(ev)
    return events


def main(argv):
    if len(argv) != 2:
        print("usage: receipts.py EVENTS.jsonl", file=sys.stderr)
        return 2
    results = receipt_results(read_lines(argv[1]))
    bad = [r for r in results if not r["ok"]]
    for r in results:
        print("%s %s %s" % ("ok  " if r["ok"] else "FAIL", r["eventId"], r.get("reason") or r.get("assemblyDigest")))
    print("%d receipts, %d failed" % (len(results), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
