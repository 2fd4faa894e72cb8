// Package credentials finds the API key a model provider is opened with, and keeps the auth
// file that `zuno auth` writes (docs/config.md, "Provider keys").
//
// The runtime's own secrets belong in its own namespace: a ZUNO_* variable, or the auth file
// beside Zuno's database. Tool commands never see either (the shell withholds the whole
// ZUNO_* namespace and the file lies outside every workspace), so a shell call running `env`
// cannot put a key into the log. A key in the host's OPENAI_API_KEY or ANTHROPIC_API_KEY
// still works, but tool commands inherit it, and the caller says so.
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// FileName is the auth file's name in Zuno's data directory (the directory of the DB).
const FileName = "auth.json"

// Providers are the providers a key can be stored for.
var Providers = []string{"anthropic", "openai"}

// Origin says where a key came from, from the highest precedence down.
type Origin string

const (
	// OriginNamespace is ZUNO_<PROVIDER>_API_KEY: withheld from tool commands.
	OriginNamespace Origin = "namespace"
	// OriginFile is the auth file: outside every workspace, never in a command's environment.
	OriginFile Origin = "auth-file"
	// OriginHost is <PROVIDER>_API_KEY: it works, and every tool command inherits it.
	OriginHost Origin = "host"
	// OriginNone: no key is configured (a local server may need none).
	OriginNone Origin = ""
)

// Key is a provider's key and where it came from. Value must never be logged or recorded.
type Key struct {
	Provider string
	Value    string
	Origin   Origin
	// Source names the variable or the file path, for messages (never the value).
	Source string
}

// NamespaceVar and HostVar are the variables a provider's key is read from.
func NamespaceVar(provider string) string { return "ZUNO_" + HostVar(provider) }
func HostVar(provider string) string      { return strings.ToUpper(provider) + "_API_KEY" }

// Code is a stable error category.
type Code string

const (
	// CodeAuthFilePermissions: the auth file is readable or writable by others; it is not read.
	CodeAuthFilePermissions Code = "auth_file_permissions"
	// CodeAuthFileInvalid: the auth file is not a JSON object of provider keys.
	CodeAuthFileInvalid Code = "auth_file_invalid"
	// CodeUnknownProvider: no key can be stored for that provider.
	CodeUnknownProvider Code = "unknown_provider"
	// CodeEmptyKey: the key given to `zuno auth set` is blank.
	CodeEmptyKey Code = "empty_key"
	// CodeMissingKey: a provider that needs a key has none in any of the places it is read
	// from; nothing was sent and nothing recorded.
	CodeMissingKey Code = "missing_api_key"
)

// Error is a typed failure; Fix says what to do.
type Error struct {
	code Code
	Path string
	Msg  string
	Fix  string
	Err  error
}

// Error is the one text form of typed errors (domain.FormatError): the code once, then the
// message and the fix.
func (e *Error) Error() string {
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return domain.FormatError(string(e.code), "", "", msg, e.Fix)
}

// Code is the stable category.
func (e *Error) Code() string  { return string(e.code) }
func (e *Error) Unwrap() error { return e.Err }

// File is the auth file at Path: {"openai": {"apiKey": "…"}, …}, mode 0600.
type File struct{ Path string }

// At is the auth file in Zuno's data directory dir.
func At(dir string) File { return File{Path: filepath.Join(dir, FileName)} }

type entry struct {
	APIKey string `json:"apiKey"`
}

// Load reads the keys. A missing file holds none. A file that anyone but its owner may read
// or write is refused, not read: its key must be assumed seen, and a key anyone can replace
// would send the prompts to whoever replaced it.
func (f File) Load() (map[string]string, error) {
	fh, err := os.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, &Error{code: CodeAuthFileInvalid, Path: f.Path, Msg: "cannot open " + f.Path, Err: err}
	}
	defer fh.Close()
	// The mode is read from the open file, so it is the file that is then read.
	st, err := fh.Stat()
	if err != nil {
		return nil, &Error{code: CodeAuthFileInvalid, Path: f.Path, Msg: "cannot stat " + f.Path, Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{code: CodeAuthFileInvalid, Path: f.Path, Msg: f.Path + " is not a regular file",
			Fix: "remove it and store the key again with zuno auth set <provider>"}
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, &Error{code: CodeAuthFilePermissions, Path: f.Path,
			Msg: fmt.Sprintf("%s has mode %04o: others may read or change it, so it is not read", f.Path, perm),
			Fix: fmt.Sprintf("run chmod 600 %s, and replace the keys in it if others could read them", f.Path)}
	}
	var raw map[string]entry
	if err := json.NewDecoder(fh).Decode(&raw); err != nil {
		return nil, &Error{code: CodeAuthFileInvalid, Path: f.Path, Msg: f.Path + " is not a JSON object of provider keys",
			Err: err, Fix: "remove it and store the keys again with zuno auth set <provider>"}
	}
	keys := map[string]string{}
	for p, e := range raw {
		if e.APIKey != "" {
			keys[strings.ToLower(p)] = e.APIKey
		}
	}
	return keys, nil
}

// Set stores provider's key, replacing the file atomically (a new 0600 file renamed over
// the old one), so a crash leaves the old file or the new one, never half of either.
func (f File) Set(provider, key string) error {
	if err := knownProvider(provider); err != nil {
		return err
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return &Error{code: CodeEmptyKey, Msg: "the key is empty", Fix: "give the key on standard input: zuno auth set " + provider + " < keyfile"}
	}
	keys, err := f.Load()
	if err != nil {
		return err
	}
	keys[provider] = key
	return f.write(keys)
}

// Remove deletes provider's key; it reports whether there was one.
func (f File) Remove(provider string) (bool, error) {
	if err := knownProvider(provider); err != nil {
		return false, err
	}
	keys, err := f.Load()
	if err != nil {
		return false, err
	}
	if _, ok := keys[provider]; !ok {
		return false, nil
	}
	delete(keys, provider)
	return true, f.write(keys)
}

func (f File) write(keys map[string]string) error {
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &Error{code: CodeAuthFileInvalid, Path: f.Path, Msg: "cannot create " + dir, Err: err}
	}
	out := map[string]entry{}
	for p, k := range keys {
		out[p] = entry{APIKey: k}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	// CreateTemp makes the file 0600 from the start: the key is never in a readable file.
	tmp, err := os.CreateTemp(dir, ".auth-*.json")
	if err != nil {
		return &Error{code: CodeAuthFileInvalid, Path: f.Path, Msg: "cannot write in " + dir, Err: err}
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return &Error{code: CodeAuthFileInvalid, Path: f.Path, Msg: "cannot replace " + f.Path, Err: err}
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself survives a crash
		d.Close()
	}
	return nil
}

func knownProvider(p string) error {
	if slices.Contains(Providers, p) {
		return nil
	}
	return &Error{code: CodeUnknownProvider, Msg: fmt.Sprintf("%q is not a provider a key can be stored for", p),
		Fix: "use one of " + strings.Join(Providers, ", ")}
}

// Resolve finds provider's key, in this order (docs/config.md, "Provider keys"):
// ZUNO_<PROVIDER>_API_KEY, then the auth file, then the host's <PROVIDER>_API_KEY. A broken
// auth file is an error even when a host variable is set, so a key is never taken silently
// from a place the user did not mean.
func Resolve(provider string, getenv func(string) string, f File) (Key, error) {
	if v := getenv(NamespaceVar(provider)); v != "" {
		return Key{Provider: provider, Value: v, Origin: OriginNamespace, Source: NamespaceVar(provider)}, nil
	}
	keys, err := f.Load()
	if err != nil {
		return Key{Provider: provider}, err
	}
	if v := keys[provider]; v != "" {
		return Key{Provider: provider, Value: v, Origin: OriginFile, Source: f.Path}, nil
	}
	if v := getenv(HostVar(provider)); v != "" {
		return Key{Provider: provider, Value: v, Origin: OriginHost, Source: HostVar(provider)}, nil
	}
	return Key{Provider: provider}, nil
}

// HostWarning is what to say once when a key comes from a host variable: tool commands can
// see it, and how to move it where they cannot.
func HostWarning(k Key, f File) string {
	return fmt.Sprintf("the %s key comes from %s, which every tool command inherits (a shell call running env can print it); "+
		"move it: zuno auth set %s (reads it from standard input, stores it in %s), or export %s instead, then unset %s",
		k.Provider, k.Source, k.Provider, f.Path, NamespaceVar(k.Provider), k.Source)
}

// Missing is the error for provider when no key was found and its endpoint needs one. It
// names every place a key is read from, the ones withheld from tool commands first
// (docs/config.md, "Provider keys"), and baseURLVar, which points the provider at a local
// server that needs none.
func Missing(provider, baseURLVar string, f File) error {
	return &Error{code: CodeMissingKey, Path: f.Path,
		Msg: fmt.Sprintf("no %s API key is configured, so nothing was sent", provider),
		Fix: fmt.Sprintf("export %s, or store it with zuno auth set %s (reads standard input; kept in %s), or export %s "+
			"(every tool command inherits it); a local server that needs no key: set %s",
			NamespaceVar(provider), provider, f.Path, HostVar(provider), baseURLVar)}
}
