package patch

import "strings"

// String renders the patch in canonical form: every hunk with a "@@" header, removed lines
// before added ones. Parse(p.String()) gives the same operations (line numbers aside), since
// a hunk's meaning is only its Old and New lines. Only the round-trip tests use it: nothing in
// the runtime prints a patch.
func (p *Patch) String() string {
	var b strings.Builder
	b.WriteString(beginMarker + "\n")
	for _, op := range p.Ops {
		switch op := op.(type) {
		case *Add:
			b.WriteString(addMarker + " " + op.Path + "\n")
			for _, l := range strings.SplitAfter(op.Content, "\n") {
				if l != "" {
					b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
				}
			}
		case *Delete:
			b.WriteString(deleteMarker + " " + op.Path + "\n")
		case *Update:
			b.WriteString(updateMarker + " " + op.Path + "\n")
			if op.MoveTo != "" {
				b.WriteString(moveMarker + " " + op.MoveTo + "\n")
			}
			for _, c := range op.Chunks {
				if c.Context != "" {
					b.WriteString("@@ " + c.Context + "\n")
				} else {
					b.WriteString("@@\n")
				}
				for _, l := range c.Old {
					b.WriteString("-" + l + "\n")
				}
				for _, l := range c.New {
					b.WriteString("+" + l + "\n")
				}
				if c.EndOfFile {
					b.WriteString(endOfFileMarker + "\n")
				}
			}
		}
	}
	b.WriteString(endMarker + "\n")
	return b.String()
}
