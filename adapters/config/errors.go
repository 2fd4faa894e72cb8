package config

import (
	"fmt"
	"strings"
)

// Stable codes of configuration errors; they reach the CLI's JSON output.
const (
	// CodeBadConfig: a file or value does not parse, names an unknown key, or has the wrong type.
	CodeBadConfig = "bad_config"
	// CodeNotFound: the file named by --config does not exist (ZUNO_CONFIG naming none is no layer).
	CodeNotFound = "config_not_found"
	// CodeAmbiguous: zuno.json and zuno.jsonc sit in one directory.
	CodeAmbiguous = "config_ambiguous"
	// CodeUntrusted: a project-layer value that only a trusted layer may set.
	CodeUntrusted = "config_untrusted"
)

// Error is a configuration that cannot be used. Its text is "config: SOURCE: MESSAGE at line L,
// column C; FIX": where (the file, variable or flag), what is wrong with which key, and what
// to do. The message names the key itself, in the wording of encoding/json where it has one.
type Error struct {
	code string
	// Source is the file path, variable or flag; Line and Column are 1-based, 0 when unknown.
	Source       string
	Line, Column int
	// Key is the dotted path of the key at fault ("sandbox.onUnavailable"), when there is one.
	Key     string
	Message string
	Fix     string
	// Valid lists the accepted keys when the fault is an unknown key.
	Valid []string
	// off is the failing byte offset while parsing, before it becomes Line and Column.
	off int64
}

func (e *Error) Code() string { return e.code }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Source != "" {
		b.WriteString(e.Source + ": ")
	}
	b.WriteString(e.Message)
	if e.Line > 0 {
		fmt.Fprintf(&b, " at line %d, column %d", e.Line, e.Column)
	}
	if len(e.Valid) > 0 {
		b.WriteString(" (keys: " + strings.Join(e.Valid, ", ") + ")")
	}
	if e.Fix != "" {
		b.WriteString("; " + e.Fix)
	}
	return b.String()
}

// position turns a byte offset of src into a 1-based line and column (columns count bytes).
func position(src []byte, off int64) (line, col int) {
	if off < 0 || len(src) == 0 {
		return 0, 0
	}
	if off > int64(len(src)) {
		off = int64(len(src))
	}
	line, col = 1, 1
	for _, c := range src[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
