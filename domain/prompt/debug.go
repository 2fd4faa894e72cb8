package prompt

import (
	"slices"

	"github.com/zuno-run/zuno/domain/model"
)

// Redacted replaces sensitive text in debug output.
const Redacted = "<redacted>"

// DebugView is what `zuno debug prompt` shows for one receipt (see "Verifying a prompt" in
// docs/turns.md).
type DebugView struct {
	// Receipt is the receipt's metadata (ids, order, sources, roles, trust, priorities,
	// sizes, estimates, digests, hook state); its Blobs are left out.
	Receipt  Receipt   `json:"receipt"`
	Sections []Section `json:"sections"`
	// Projection is the provider-visible request rebuilt from the receipt.
	Projection model.Request `json:"projection"`
	// Sensitive is true when the view shows content (--show-sensitive).
	Sensitive bool `json:"sensitive"`
	// Verification is "" when Verify accepted the receipt, and its error text otherwise; the
	// view is still built, because a receipt that fails verification is exactly the one
	// someone needs to look at.
	Verification string `json:"verification,omitempty"`
}

// NewDebugView builds the debug view of a receipt. Unless showSensitive, section content and
// the system and developer messages of the projection are replaced with Redacted: they hold
// AGENTS.md files, the work state and runtime instructions. Ids, sources, sizes and digests
// stay, though they can still reveal a project's layout.
func NewDebugView(r Receipt, showSensitive bool) DebugView {
	v, _ := VerifiedDebugView(r, showSensitive)
	return v
}

// VerifiedDebugView is NewDebugView, with Verify's error: a caller that reports the
// mismatches does not verify the receipt a second time (every message of a long session's
// receipt is decoded and hashed).
func VerifiedDebugView(r Receipt, showSensitive bool) (DebugView, error) {
	v := DebugView{Sensitive: showSensitive}
	verr := Verify(r)
	if verr != nil {
		v.Verification = verr.Error()
	}
	for _, s := range r.Sections {
		v.Sections = append(v.Sections, Section{PromptSection: s, Content: r.Blobs[s.SHA256]})
	}
	if req, err := Reconstruct(r); err == nil {
		v.Projection = req
	}
	v.Receipt = r
	v.Receipt.Blobs = nil
	v.Receipt.Sections = slices.Clone(r.Sections)
	if !showSensitive {
		v = v.Redact()
	}
	return v, verr
}

// Redact returns a copy of the view with section content and system and developer
// projection text replaced with Redacted.
func (v DebugView) Redact() DebugView {
	v.Sensitive = false
	v.Sections = slices.Clone(v.Sections)
	for i := range v.Sections {
		v.Sections[i].Content = Redacted
	}
	v.Projection = RedactRequest(v.Projection)
	return v
}

// RedactRequest returns a copy of req whose system and developer messages read Redacted.
func RedactRequest(req model.Request) model.Request {
	req.Messages = slices.Clone(req.Messages)
	for i, m := range req.Messages {
		if m.Role == model.RoleSystem || m.Role == model.RoleDeveloper {
			req.Messages[i].Text = Redacted
		}
	}
	return req
}
