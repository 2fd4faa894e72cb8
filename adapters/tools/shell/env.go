package shell

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// ExcludeError is a shell.env.exclude entry that cannot be used as a name pattern.
type ExcludeError struct {
	Pattern string
	Reason  string
}

func (e *ExcludeError) Error() string {
	return fmt.Sprintf("shell.env.exclude entry %q %s: write a variable name or a glob such as \"AWS_*\" (*, ? and [...] as in path.Match)",
		e.Pattern, e.Reason)
}

// Code is the stable category of the refusal.
func (e *ExcludeError) Code() string { return "bad_config" }

// ValidateExclude checks shell.env.exclude patterns. A pattern only ever removes names: there
// is no negation ("!NAME"), because an allow list back into the ZUNO_* namespace is what the
// namespace rule exists to rule out (docs/tools.md, "What a shell command inherits").
func ValidateExclude(patterns []string) error {
	for _, p := range patterns {
		switch {
		case strings.TrimSpace(p) == "":
			return &ExcludeError{p, "is empty"}
		case strings.HasPrefix(p, "!"):
			return &ExcludeError{p, "is a negation; the list only withholds, it never puts a name back"}
		case strings.ContainsAny(p, "=\x00"):
			return &ExcludeError{p, "contains '=' or NUL, which no variable name does"}
		}
		if _, err := path.Match(strings.ToUpper(p), "X"); err != nil {
			return &ExcludeError{p, "is not a valid glob"}
		}
	}
	return nil
}

// Environ is base with Zuno's private namespace removed (ScrubEnv) and every name matching
// an exclude pattern removed too, and the sorted names that only the patterns withheld (what
// the call's started event records; never the values). Patterns compare case-insensitively,
// like the namespace rule, so folding only ever makes the withheld set larger. Invalid
// patterns match nothing; ValidateExclude refuses them at configuration load.
func Environ(base, exclude []string) (env, withheld []string) {
	env = make([]string, 0, len(base))
	for _, kv := range ScrubEnv(base) {
		name, _, _ := strings.Cut(kv, "=")
		if excluded(name, exclude) {
			if !slices.Contains(withheld, name) {
				withheld = append(withheld, name)
			}
			continue
		}
		env = append(env, kv)
	}
	slices.Sort(withheld)
	return env, withheld
}

func excluded(name string, patterns []string) bool {
	up := strings.ToUpper(name)
	for _, p := range patterns {
		if ok, err := path.Match(strings.ToUpper(p), up); err == nil && ok {
			return true
		}
	}
	return false
}

// Environ is the environment a command of this runner starts with (before a request's own
// Env, the host hook), and the names the runner's Exclude withheld beyond the namespace.
func (r *Runner) Environ() (env, withheld []string) {
	base := os.Environ()
	if r.BaseEnv != nil {
		base = r.BaseEnv()
	}
	return Environ(base, r.Exclude)
}
