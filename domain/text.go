package domain

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTitleRunes bounds every title (session, plan, step, todo item): titles are shown in lists
// and injected into prompts, where a paragraph posing as a title costs tokens on every turn.
const MaxTitleRunes = 200

// MaxIDRunes bounds caller-chosen ids (step, item, message).
const MaxIDRunes = 64

// CheckTitle validates a title and returns it trimmed of surrounding space.
func CheckTitle(field, title string) (string, *Error) {
	if !utf8.ValidString(title) {
		return "", Invalid(field, "is not valid UTF-8", "send the title as UTF-8 text")
	}
	title = strings.TrimSpace(title)
	if title == "" {
		return "", Invalid(field, "is empty", "give a short non-empty title")
	}
	if n := utf8.RuneCountInString(title); n > MaxTitleRunes {
		return "", Invalid(field, fmt.Sprintf("has %d characters, more than the limit of %d", n, MaxTitleRunes),
			fmt.Sprintf("shorten it to at most %d characters and put details elsewhere", MaxTitleRunes))
	}
	if strings.IndexFunc(title, unicode.IsControl) >= 0 {
		return "", Invalid(field, "contains a line break or control character", "write the title on one line")
	}
	return title, nil
}

// CheckID validates a caller-chosen id. Ids are compared byte for byte, so anything that could
// look equal but differ (surrounding space, control characters) is refused rather than
// normalised.
func CheckID(field, id string) *Error {
	switch {
	case id == "":
		return Invalid(field, "is empty", "give a non-empty id")
	case !utf8.ValidString(id):
		return Invalid(field, "is not valid UTF-8", "use letters, digits, '-' and '_'")
	case utf8.RuneCountInString(id) > MaxIDRunes:
		return Invalid(field, fmt.Sprintf("is longer than %d characters", MaxIDRunes), "use a short id such as step-3")
	case strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return Invalid(field, fmt.Sprintf("%q contains space or control characters", id), "use letters, digits, '-' and '_'")
	}
	return nil
}
