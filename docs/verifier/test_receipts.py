"""Tests of receipts.py over the receipt test vectors (docs/formats/vectors/receipts), which
Zuno's Go code generated from a real session and checks on every run
(cmd/zuno/receipt_vectors_test.go). Run: python3 -m unittest test_receipts (in docs/verifier)."""

import copy
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

import receipts

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "formats", "vectors", "receipts")


def load(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        return json.load(f)


def apply(change, events):
    out = copy.deepcopy(events)
    for ev in out:
        if ev["eventId"] == change["eventId"]:
            assert ev["data"].count(change["find"]) == 1, change["eventId"]
            ev["data"] = ev["data"].replace(change["find"], change["replace"], 1)
            return out
    raise AssertionError("no event " + change["eventId"])


def flip_in(data, find):
    """data with the last ASCII letter of the first occurrence of find changed."""
    i = data.index(find)
    for j in range(i + len(find) - 1, i - 1, -1):
        if data[j].isascii() and data[j].isalpha():
            return data[:j] + ("y" if data[j] == "x" else "x") + data[j + 1:]
    raise AssertionError("no letter in " + find)


class SessionVector(unittest.TestCase):
    def setUp(self):
        self.vector = load("session.json")
        self.events = self.vector["events"]

    def test_format(self):
        self.assertEqual(self.vector["format"], "zuno receipts v1")

    def test_every_receipt_checks_with_the_go_digests(self):
        self.assertIsNone(receipts.check_session(self.events))
        got = receipts.receipt_results(self.events)
        want = self.vector["receipts"]
        self.assertEqual([r["eventId"] for r in got], [r["eventId"] for r in want])
        for g, w in zip(got, want):
            with self.subTest(receipt=w["eventId"], stream=w["stream"]):
                self.assertTrue(g["ok"], g["reason"])
                for key in ("receiptId", "headerDigest", "conversationDigest", "assemblyDigest", "actualDigest",
                            "messages", "estimatedInputTokens"):
                    self.assertEqual(g[key], w[key], key)

    def test_the_vector_covers_the_rules(self):
        # What the spec describes is in the vector: receipts stored relative to earlier ones,
        # messages left to the transcript, a fork, compactions, failed and blocked calls.
        want = self.vector["receipts"]
        self.assertTrue(any(r.get("headerBase") for r in want))
        self.assertTrue(any(r.get("conversationBaseParts") for r in want))
        self.assertTrue(any(r.get("loggedParts") for r in want))
        self.assertTrue(any(r["storedConversationParts"] for r in want))
        types = {e["type"] for e in self.events}
        for t in ("session.forked.1", "session.transcript.compacted.1", "session.tool.blocked.1"):
            self.assertIn(t, types)
        self.assertTrue(any('"status":"failed"' in e["data"] for e in self.events if e["type"] == receipts.T_REQUEST))
        self.assertTrue(any('"outcome":"error"' in e["data"] for e in self.events if e["type"] == receipts.T_SETTLED))

    def test_a_different_event_order_within_streams_does_not_matter(self):
        # Streams are folded by revision; the list's interleaving of streams is the log's.
        shuffled = sorted(self.events, key=lambda e: (e["stream"], e["revision"]))
        self.assertIsNone(receipts.check_session(shuffled))


class AlteredVectors(unittest.TestCase):
    """Each altered vector changes one byte of session.json's events; the checker must fail
    at the receipt the Go code fails at, with the same mismatch code."""

    def test_altered(self):
        session = load("session.json")["events"]
        files = sorted(glob.glob(os.path.join(VECTORS, "altered-*.json")))
        self.assertGreaterEqual(len(files), 8)
        for path in files:
            v = load(os.path.basename(path))
            with self.subTest(vector=os.path.basename(path)):
                got = receipts.check_session(apply(v["alter"], session))
                self.assertIsNotNone(got, "the altered events check")
                self.assertEqual(got[0], v["fails"]["eventId"], got[1])
                self.assertTrue(got[1].startswith(v["fails"]["code"] + ":"), got[1])


class MoreAlterations(unittest.TestCase):
    """Alterations made here, beyond the vectors': each must fail naming a receipt."""

    def setUp(self):
        self.events = load("session.json")["events"]
        self.receipt_events = [e for e in self.events if e["type"] == receipts.T_RECEIPT]

    def first_receipt_with(self, text):
        return next(e for e in self.receipt_events if text in e["data"])

    def test_a_tool_blob(self):
        ev = self.first_receipt_with('"kind":"tool"')
        data = json.loads(ev["data"])
        digest = data["tools"][0]["sha256"]
        events = copy.deepcopy(self.events)
        target = next(e for e in events if e["eventId"] == ev["eventId"])
        target["data"] = flip_in(target["data"], '"%s":"{\\"name\\":\\"' % digest)
        got = receipts.check_session(events)
        self.assertEqual(got[0], ev["eventId"])
        self.assertTrue(got[1].startswith("blob_digest:") or got[1].startswith("blob_not_canonical:"), got[1])

    def test_a_blocked_call_result(self):
        events = copy.deepcopy(self.events)
        blocked = next(e for e in events if e["type"] == receipts.T_BLOCKED)
        blocked["data"] = flip_in(blocked["data"], '"output":"Blocked')
        got = receipts.check_session(events)
        later = [e for e in events if e["stream"] == blocked["stream"] and e["type"] == receipts.T_RECEIPT
                 and e["position"] > blocked["position"]]
        self.assertEqual(got[0], later[0]["eventId"])
        self.assertTrue(got[1].startswith("conversation_digest:"), got[1])

    def test_a_missing_base_receipt(self):
        # The second receipt names the first as its header and conversation base.
        first = self.receipt_events[0]
        second = next(e for e in self.receipt_events[1:] if e["stream"] == first["stream"])
        events = [e for e in self.events if e["eventId"] != first["eventId"]]
        got = receipts.check_session(events)
        self.assertEqual(got[0], second["eventId"])
        self.assertTrue(got[1].startswith("header_base:"), got[1])

    def test_a_fork_without_its_source(self):
        fork = next(e for e in self.events if e["type"] == receipts.T_FORKED)
        source = json.loads(fork["data"])["source"]["stream"]
        events = [e for e in self.events if e["stream"] != source]
        got = receipts.check_session(events)
        self.assertIsNotNone(got)
        self.assertTrue(got[1].startswith("fork_source:"), got[1])

    def test_a_failed_request_that_gains_a_response(self):
        # A failed request adds no message: one that claims a response still adds none, and
        # the receipts stay valid; turning it into a completed one adds a message they lack.
        events = copy.deepcopy(self.events)
        failed = next(e for e in events if e["type"] == receipts.T_REQUEST and '"status":"failed"' in e["data"])
        failed["data"] = failed["data"].replace('"status":"failed"', '"status":"compled"', 1)
        self.assertIsNone(receipts.check_session(events))
        failed["data"] = failed["data"].replace('"status":"compled"', '"status":"completed"', 1)
        failed["data"] = failed["data"][:-1] + ',"response":{"text":"invented"}}'
        got = receipts.check_session(events)
        self.assertIsNotNone(got)
        self.assertEqual(got[1].split(":")[0], "conversation_digest")

    def test_undecodable_receipt(self):
        events = copy.deepcopy(self.events)
        ev = next(e for e in events if e["type"] == receipts.T_RECEIPT)
        ev["data"] = ev["data"].replace('"schemaVersion":1', '"schemaVersion":1.5', 1)
        got = receipts.check_session(events)
        self.assertTrue(got[1].startswith("event_undecodable:"), got[1])


class Encoding(unittest.TestCase):
    """The JSON and estimator rules of docs/formats/receipts.md, on the spec's examples."""

    def test_go_string_escaping(self):
        self.assertEqual(receipts.enc_str('<a href="x">&</a>'), '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"')
        self.assertEqual(receipts.enc_str("\u2028\u2029\x00\x1f\x7f\b\f\n\r\t\\"),
                         '"\\u2028\\u2029\\u0000\\u001f\x7f\\b\\f\\n\\r\\t\\\\"')
        self.assertEqual(receipts.enc_str("ü中😀"), '"ü中😀"')

    def test_lone_surrogate_decodes_to_replacement(self):
        self.assertEqual(receipts.d_str(receipts.loads('"a\\ud800b"')), "a\ufffdb")

    def test_estimator(self):
        for text, tokens in [("", 0), ("abcd", 1), ("abcde", 2), ("中文", 2), ("ab中", 2), ("😀", 1)]:
            self.assertEqual(receipts.estimate_tokens(text), tokens, text)

    def test_compact_raw(self):
        self.assertEqual(receipts.compact_raw('{ "a" : [1, 2.50, "x < y"],\n "b":"\\u0041 " }'),
                         '{"a":[1,2.50,"x \\u003c y"],"b":"\\u0041 "}')

    def test_non_canonical_message_blob(self):
        canonical = receipts.enc_message(receipts.message("user", "hi"))
        self.assertEqual(canonical, '{"role":"user","text":"hi"}')
        for blob in ['{"text":"hi","role":"user"}', '{"role":"user","text":"hi","isError":false}',
                     '{"role":"user", "text":"hi"}', '{"Role":"user","text":"hi"}']:
            self.assertIsNone(receipts._canonical(blob, receipts.decode_message, receipts.enc_message), blob)


class EncodingVector(unittest.TestCase):
    """encoding.json: messages the session does not hold (reasoning, provider call ids, every
    escape, bytes that are not UTF-8), with the blob and part Zuno records for each."""

    def test_messages(self):
        cases = load("encoding.json")["messages"]
        self.assertGreaterEqual(len(cases), 8)

        def text(h):
            return receipts.go_utf8(bytes.fromhex(h or ""))

        for c in cases:
            with self.subTest(case=c["name"]):
                calls = [{k: text(call.get(k)) for k in ("id", "providerId", "name", "arguments")}
                         for call in c.get("toolCallsHex") or []] or None
                reasoning = [{k: text(r.get(k)) for k in ("id", "summary", "encryptedContent")}
                             for r in c.get("reasoningHex") or []] or None
                m = receipts.message(c["role"], text(c.get("textHex")), calls, c.get("toolCallId", ""),
                                     c.get("isError", False), reasoning)
                part, blob = receipts.message_part(m)
                self.assertEqual(blob, c["blob"])
                want = dict({"section": "", "name": ""}, **c["part"])
                self.assertEqual(part, want)
                # The blob is canonical: it decodes to what it encodes.
                self.assertIsNotNone(receipts._canonical(blob, receipts.decode_message, receipts.enc_message))


class CommandLine(unittest.TestCase):
    def run_cli(self, events):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
            for ev in events:
                f.write(json.dumps(ev) + "\n")
        try:
            return subprocess.run([sys.executable, os.path.join(HERE, "receipts.py"), f.name], capture_output=True, text=True)
        finally:
            os.unlink(f.name)

    def test_valid_and_altered(self):
        events = load("session.json")["events"]
        ok = self.run_cli(events)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        v = load("altered-tool-result.json")
        bad = self.run_cli(apply(v["alter"], events))
        self.assertEqual(bad.returncode, 1)
        self.assertIn("FAIL " + v["fails"]["eventId"] + " conversation_digest:", bad.stdout)


if __name__ == "__main__":
    unittest.main()
