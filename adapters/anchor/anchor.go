// Package anchor keeps the heads of the event log's hash chains in a file outside the
// database, optionally signed with an ed25519 key, for `zuno verify --anchor` (docs/storage.md,
// "Anchors"). Whoever can write the database can rewrite a chain from any point on and delete
// its tail; neither can be seen from inside the database, both can against an anchor kept
// elsewhere, and a signed anchor cannot be rewritten to match without the key.
package anchor

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/zuno-run/zuno/events"
)

// Version names the file format; it is part of what is signed. Version 2 added the chain:
// each anchor's counter and its predecessor's digest. A version 1 file is still read (as
// counter 0, the chain not yet begun) and is replaced by a version 2 one when renewed.
const (
	Version   = "zuno.anchor.2"
	VersionV1 = "zuno.anchor.1"
)

// Stable error codes.
const (
	// CodeAnchorInvalid: the anchor file does not parse, or is of another format version.
	CodeAnchorInvalid = "anchor_invalid"
	// CodeAnchorUnsigned: a key is configured but the anchor carries no signature.
	CodeAnchorUnsigned = "anchor_unsigned"
	// CodeAnchorSignature: the anchor's signature does not verify with the configured key.
	CodeAnchorSignature = "anchor_signature_invalid"
	// CodeAnchorKeyRequired: the anchor is signed but no key is configured to check it.
	CodeAnchorKeyRequired = "anchor_key_required"
	// CodeAnchorKeyInvalid: ZUNO_ANCHOR_KEY or ZUNO_ANCHOR_PUBLIC_KEY is not a base64 ed25519 key.
	CodeAnchorKeyInvalid = "anchor_key_invalid"
)

// Error is a typed anchor error; its message names the problem and the fix.
type Error struct {
	code, msg string
}

func (e *Error) Error() string { return e.code + ": " + e.msg }

// Code returns the stable code.
func (e *Error) Code() string { return e.code }

// File is an anchor as stored.
type File struct {
	Version   string    `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	// Chain names the anchor's chain in the log (events.LogAnchored); Counter numbers the
	// chain's anchors from 1; Previous is the digest of the anchor this one replaced, empty
	// for the first of a chain.
	Chain    string              `json:"chain,omitempty"`
	Counter  uint64              `json:"counter,omitempty"`
	Previous string              `json:"previous,omitempty"`
	Heads    []events.StreamHead `json:"heads"`
	// Signature is the base64 ed25519 signature of signedBytes, absent when unsigned.
	Signature string `json:"signature,omitempty"`
}

// Keys are the configured keys: Private signs (and checks, by its public half); Public only
// checks, for an auditor who must not be able to sign.
type Keys struct {
	Private ed25519.PrivateKey
	Public  ed25519.PublicKey
}

// ParseKeys reads ZUNO_ANCHOR_KEY (a base64 ed25519 seed of 32 bytes or private key of 64)
// and ZUNO_ANCHOR_PUBLIC_KEY (base64, 32 bytes); either may be empty.
func ParseKeys(private, public string) (Keys, error) {
	var k Keys
	if private != "" {
		raw, err := base64.StdEncoding.DecodeString(private)
		switch {
		case err == nil && len(raw) == ed25519.SeedSize:
			k.Private = ed25519.NewKeyFromSeed(raw)
		case err == nil && len(raw) == ed25519.PrivateKeySize:
			k.Private = ed25519.PrivateKey(raw)
		default:
			return k, &Error{CodeAnchorKeyInvalid, "ZUNO_ANCHOR_KEY is not a base64 ed25519 seed (32 bytes) or private key (64 bytes); generate one with `head -c32 /dev/urandom | base64`"}
		}
		k.Public = k.Private.Public().(ed25519.PublicKey)
	}
	if public != "" {
		raw, err := base64.StdEncoding.DecodeString(public)
		if err != nil || len(raw) != ed25519.PublicKeySize {
			return k, &Error{CodeAnchorKeyInvalid, "ZUNO_ANCHOR_PUBLIC_KEY is not a base64 ed25519 public key (32 bytes)"}
		}
		if k.Public != nil && !k.Public.Equal(ed25519.PublicKey(raw)) {
			return k, &Error{CodeAnchorKeyInvalid, "ZUNO_ANCHOR_PUBLIC_KEY is not the public half of ZUNO_ANCHOR_KEY; set one of them"}
		}
		k.Public = ed25519.PublicKey(raw)
	}
	return k, nil
}

// signedBytes are what a signature covers and a digest names: the file without its signature,
// as compact JSON with its members in the order below (docs/storage.md, "Anchors").
func signedBytes(f File) []byte {
	if f.Version == VersionV1 {
		b, _ := json.Marshal(struct {
			Version   string              `json:"version"`
			CreatedAt time.Time           `json:"createdAt"`
			Heads     []events.StreamHead `json:"heads"`
		}{f.Version, f.CreatedAt, f.Heads})
		return b
	}
	b, _ := json.Marshal(struct {
		Version   string              `json:"version"`
		CreatedAt time.Time           `json:"createdAt"`
		Chain     string              `json:"chain"`
		Counter   uint64              `json:"counter"`
		Previous  string              `json:"previous"`
		Heads     []events.StreamHead `json:"heads"`
	}{f.Version, f.CreatedAt, f.Chain, f.Counter, f.Previous, f.Heads})
	return b
}

// Digest names an anchor in the log (events.LogAnchored) and in its successor: "sha256:" and
// the hex SHA-256 of its signed bytes.
func Digest(f File) string {
	sum := sha256.Sum256(signedBytes(f))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// New is the version 2 anchor of heads: the counter-th of chain, after previous.
func New(heads []events.StreamHead, chain string, counter uint64, previous string, now time.Time) File {
	if heads == nil {
		heads = []events.StreamHead{}
	}
	return File{Version: Version, CreatedAt: now.UTC(), Chain: chain, Counter: counter, Previous: previous, Heads: heads}
}

// GenerateKey makes a key pair for ZUNO_ANCHOR_KEY (the base64 seed) and
// ZUNO_ANCHOR_PUBLIC_KEY (the base64 public key), from the system's random source.
func GenerateKey() (seed, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	return base64.StdEncoding.EncodeToString(priv.Seed()), base64.StdEncoding.EncodeToString(pub), nil
}

// PublicKey is the base64 public key of keys, empty when none is configured.
func (k Keys) PublicKey() string {
	if k.Public == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(k.Public)
}

// Read loads the anchor at path and checks its signature against keys. ok is false when no
// file exists there (a first run).
func Read(path string, keys Keys) (f File, ok bool, err error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	if err := json.Unmarshal(raw, &f); err != nil || (f.Version != Version && f.Version != VersionV1) {
		return File{}, false, &Error{CodeAnchorInvalid, fmt.Sprintf("%s is not a %s anchor file; point --anchor at the file an earlier `zuno verify --anchor` wrote, or at a new path to start one", path, Version)}
	}
	return f, true, check(path, f, keys)
}

func check(path string, f File, keys Keys) error {
	switch {
	case keys.Public == nil && f.Signature != "":
		return &Error{CodeAnchorKeyRequired, fmt.Sprintf("%s is signed; set ZUNO_ANCHOR_PUBLIC_KEY (or ZUNO_ANCHOR_KEY) so its signature can be checked", path)}
	case keys.Public == nil:
		return nil
	case f.Signature == "":
		return &Error{CodeAnchorUnsigned, fmt.Sprintf("%s carries no signature but a key is configured; it may have been replaced: restore the signed copy", path)}
	}
	sig, err := base64.StdEncoding.DecodeString(f.Signature)
	if err != nil || !ed25519.Verify(keys.Public, signedBytes(f), sig) {
		return &Error{CodeAnchorSignature, fmt.Sprintf("%s was not signed by the configured key, or was changed after signing: restore the signed copy", path)}
	}
	return nil
}

// Write stores f at path (atomically: a temporary file renamed over it), signed when a
// private key is configured. Only a private key may write: with a public key alone (an
// auditor) the file is never touched.
func Write(path string, f File, keys Keys) error {
	if keys.Private == nil && keys.Public != nil {
		return &Error{CodeAnchorKeyRequired, fmt.Sprintf("%s is checked with a public key only, which cannot sign: it is not written", path)}
	}
	if keys.Private != nil {
		f.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(keys.Private, signedBytes(f)))
	}
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".anchor-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
