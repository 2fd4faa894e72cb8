package console

import (
	"html/template"

	"github.com/zuno-run/zuno/domain/prompt"
)

// funcs are the templates' helpers; none returns markup, so html/template escapes every
// value they give.
var funcs = template.FuncMap{
	// short is a digest's first 12 characters, the full one in the title attribute.
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12] + "…"
		}
		return s
	},
	"deref": func(p *int) any {
		if p == nil {
			return "none"
		}
		return *p
	},
	// redacted: the text is debug prompt's redaction marker, not content.
	"redacted": func(s string) bool { return s == prompt.Redacted },
}
