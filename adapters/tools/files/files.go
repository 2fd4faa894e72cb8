// Package files executes the file tools (read, write, apply_patch) over one workspace root.
//
// Paths are reached by handle, never by name (beneath.go, authorize.go): from the workspace
// root, or from a directory an external_directory grant admitted, one directory at a time with
// symbolic links refused; only a final link is followed, once, and Authorize says where it
// leads before the permission gate asks. read issues a read
// credential (SHA-256 of the file's full bytes and the path's read generation); write and
// apply_patch refuse to replace an existing file without a current one (apply_patch conflict
// recovery: see "Read credentials and `stale_read`" in docs/tools.md). All mutations run under
// one mutation lock per Workspace: apply_patch loads its snapshot, plans every file with
// package patch (any conflict means zero writes) and writes each file atomically (temporary
// file and rename in the same directory, mode preserved). A failure after writing has begun is
// an *UncertainError listing what was and was not written.
// Credentials recorded by an earlier process of the session are restored with
// RestoreCredential (restore.go), still checked against the file on disk at write time.
package files

import (
	"errors"
	"fmt"
	"sync"

	"github.com/zuno-run/zuno/domain/patch"
)

// Code is the category of a refused or failed call.
type Code string

const (
	// InvalidArguments: a path outside the workspace, malformed, or naming the wrong kind of
	// entry for the tool; the call had no effect.
	InvalidArguments Code = "invalid_arguments"
	// NotFound: read names a path with nothing there.
	NotFound Code = "not_found"
	// CodeUncertain: writing began and then failed; UncertainError says what happened.
	CodeUncertain Code = "uncertain"
	// SymlinkRefused: a symbolic link in the middle of the path (or a final link that points
	// at another link, or that appeared after the path was checked); nothing was done.
	SymlinkRefused Code = "symlink_refused"
	// ExternalDirectoryRequired: the path (or where its final link points) is outside the
	// workspace and the call carries no external_directory grant for its directory.
	ExternalDirectoryRequired Code = "external_directory_required"
	// WorkspaceGone: the Workspace was opened Detached, over a directory that no longer
	// exists (a replay); nothing was read or written.
	WorkspaceGone Code = "workspace_gone"
)

// Error is a refused call: nothing was read or written. Its message is meant for the model.
type Error struct {
	Kind Code
	// Field is the argument at fault ("path", "offset", "limit", or "").
	Field   string
	Message string
	Err     error
}

// Code returns the stable code.
func (e *Error) Code() string { return string(e.Kind) }
func (e *Error) Error() string {
	return string(e.Kind) + ": " + e.Message
}
func (e *Error) Unwrap() error { return e.Err }

func invalid(field, format string, args ...any) *Error {
	return &Error{Kind: InvalidArguments, Field: field, Message: fmt.Sprintf(format, args...)}
}

// UncertainError is a write that failed after other writes of the same call had succeeded
// (or may have): the workspace is in neither the old nor the new state. The model must
// inspect the actual files before doing anything else and must not resend the call unchanged.
type UncertainError struct {
	// Written are the paths whose write or deletion completed, in order.
	Written []string
	// Failed is the path whose write failed; its state is unknown.
	Failed string
	// NotWritten are the paths the plan still had to write or delete (Failed excluded).
	NotWritten []string
	Err        error
}

// Code returns the stable code "uncertain".
func (e *UncertainError) Code() string { return string(CodeUncertain) }

func (e *UncertainError) Error() string {
	return fmt.Sprintf("%s: writing %s failed after writing had begun (%v); written: %v; not written: %v; "+
		"required action: read the listed files to see their actual state before changing anything, and do not resend this call unchanged",
		CodeUncertain, e.Failed, e.Err, e.Written, e.NotWritten)
}

func (e *UncertainError) Unwrap() error { return e.Err }

// Credentials holds the read generations of paths and the read credentials the model holds,
// plus the recorded apply_patch attempts (for IdenticalReplay). Keys are root-relative,
// slash-separated paths after symbolic links are resolved. It is safe for concurrent use.
type Credentials struct {
	mu       sync.Mutex
	gen      map[string]uint64
	held     map[string]patch.ReadCredential
	attempts map[string][]patch.Attempt
}

// NewCredentials returns an empty store.
func NewCredentials() *Credentials {
	return &Credentials{
		gen:      map[string]uint64{},
		held:     map[string]patch.ReadCredential{},
		attempts: map[string][]patch.Attempt{},
	}
}

// Issue records that the model has read content at path and returns the credential.
func (c *Credentials) Issue(path string, content []byte) patch.ReadCredential {
	return c.IssueDigest(path, patch.DigestOf(content))
}

// IssueDigest is Issue for content streamed through a hash: digest is its patch.DigestOf.
func (c *Credentials) IssueDigest(path string, digest patch.Digest) patch.ReadCredential {
	c.mu.Lock()
	defer c.mu.Unlock()
	cred := patch.ReadCredential{Digest: digest, Generation: c.gen[path]}
	c.held[path] = cred
	return cred
}

// Held returns the model's credential for path, or nil.
func (c *Credentials) Held(path string) *patch.ReadCredential {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cred, ok := c.held[path]; ok {
		return &cred
	}
	return nil
}

// Generation returns path's current read generation.
func (c *Credentials) Generation(path string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen[path]
}

// Written records that the runtime replaced path with content: the generation moves on, so
// every older credential is stale, and the writer holds a credential for what it wrote.
func (c *Credentials) Written(path string, content []byte) patch.ReadCredential {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen[path]++
	cred := patch.ReadCredential{Digest: patch.DigestOf(content), Generation: c.gen[path]}
	c.held[path] = cred
	return cred
}

// Invalidate records that path changed in a way the model has not seen (a deletion, or an
// uncertain write): the generation moves on and no credential is held.
func (c *Credentials) Invalidate(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen[path]++
	delete(c.held, path)
}

// Attempts returns the recorded apply_patch attempts on path.
func (c *Credentials) Attempts(path string) []patch.Attempt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]patch.Attempt(nil), c.attempts[path]...)
}

// maxAttempts bounds the attempts kept per path.
const maxAttempts = 32

// Record stores attempts (from patch.WritePlan.Attempts or patch.ConflictError.Attempts).
func (c *Credentials) Record(as []patch.PathAttempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range as {
		list := append(c.attempts[a.Path], a.Attempt)
		if len(list) > maxAttempts {
			list = list[len(list)-maxAttempts:]
		}
		c.attempts[a.Path] = list
	}
}

var errNoRoot = errors.New("files: no workspace root")
