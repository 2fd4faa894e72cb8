package permission

import "strings"

// matchWildcard reports whether s matches pattern, where * matches any run of characters,
// separators included, and every other character matches itself. It runs in O(len(p)·len(s))
// without backtracking blow-up, so a hostile pattern or resource cannot stall the gate. A
// pattern ending in " *" also matches its words alone: "git status *" matches "git status",
// as a person writing it means (and as an "always" answer saves it).
func matchWildcard(pattern, s string) bool {
	if prefix, ok := strings.CutSuffix(pattern, " *"); ok && s == prefix {
		return true
	}
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// MatchesKey reports whether a rule's key pattern fits a permission key, as the gate decides
// it (Policy.Decide): the same wildcard matcher, * alone being the wildcard. The configuration
// loader asks it whether a project-layer rule could reach a permission that layer may not
// loosen (docs/config.md, "Trust"), so that a pattern such as "external*" is judged by what
// the gate would apply it to, not by its spelling.
func MatchesKey(pattern, key string) bool { return matchWildcard(pattern, key) }

// ProjectProtectedKeys are the permissions the project layer may not loosen: a checked-in
// file, which the sandboxed shell can write, may not allow the agent past the workspace
// (docs/permissions.md, "What the project layer may not loosen").
func ProjectProtectedKeys() []string { return []string{ExternalDirectory} }

// normalise unifies a path's spelling without changing what it names: backslashes become
// slashes, doubled separators and . segments go, a trailing separator goes. .. segments stay:
// resolving them is for deny only (resolveDots).
func normalise(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	abs := strings.HasPrefix(p, "/")
	var keep []string
	for _, seg := range strings.Split(p, "/") {
		if seg != "" && seg != "." {
			keep = append(keep, seg)
		}
	}
	out := strings.Join(keep, "/")
	if abs {
		return "/" + out
	}
	if out == "" && p != "" {
		return "."
	}
	return out
}

// resolveDots removes each .. segment with the segment before it, on a normalised path. A ..
// that climbs above a relative path's start stays; one above the root is dropped.
func resolveDots(p string) string {
	abs := strings.HasPrefix(p, "/")
	var keep []string
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		switch {
		case seg == "..":
			if len(keep) > 0 && keep[len(keep)-1] != ".." && !isDrive(keep[len(keep)-1], len(keep) == 1) {
				keep = keep[:len(keep)-1]
			} else if !abs && !(len(keep) == 1 && isDrive(keep[0], true)) {
				keep = append(keep, seg)
			}
		case seg != "" && seg != ".":
			keep = append(keep, seg)
		}
	}
	out := strings.Join(keep, "/")
	if abs {
		return "/" + out
	}
	if out == "" {
		return "."
	}
	return out
}

// isDrive reports whether seg is a Windows drive ("C:") in the first position of a path.
func isDrive(seg string, first bool) bool {
	return first && len(seg) == 2 && seg[1] == ':' && isLetter(seg[0])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isAbs reports whether a normalised path is absolute: /… or a drive C:/… (or C: alone).
func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || len(p) >= 2 && p[1] == ':' && isLetter(p[0]) && (len(p) == 2 || p[2] == '/')
}

// within returns p's tail below root ("" for root itself), or ok false when p is not inside.
func within(p, root string) (tail string, ok bool) {
	if root == "/" {
		return strings.TrimPrefix(p, "/"), strings.HasPrefix(p, "/")
	}
	root = strings.TrimSuffix(root, "/")
	if root == "" || p == root {
		return "", p == root && root != ""
	}
	if strings.HasPrefix(p, root+"/") {
		return p[len(root)+1:], true
	}
	return "", false
}

// pathSpellings are the spellings of one path resource that rules match. plain is what every
// rule matches: the path as the call gave it and its normalised form. deny adds what only a
// deny matches: the ..-resolved path, its absolute form (joined to the workspace) and its
// workspace-relative tail, so that no respelling of a path gets around a deny, while an allow
// never grants a file its pattern does not name.
type pathSpellings struct {
	plain, deny []string
	// abs is the resolved absolute path ("" when the path is relative and no workspace is
	// known); outside reports whether it is outside the workspace.
	abs     string
	outside bool
}

func spell(resource, workspace string) pathSpellings {
	norm := normalise(resource)
	resolved := resolveDots(norm)
	ws := resolveDots(normalise(workspace))
	s := pathSpellings{plain: []string{resource, norm}}
	s.deny = append(s.deny, s.plain...)
	s.deny = append(s.deny, resolved)
	switch {
	case isAbs(resolved):
		s.abs = resolved
	case workspace != "":
		s.abs = resolveDots(ws + "/" + resolved)
	}
	if s.abs != "" {
		s.deny = append(s.deny, s.abs)
		if tail, ok := within(s.abs, ws); ok && workspace != "" {
			if tail == "" {
				tail = "." // the workspace itself, spelled relative
			}
			s.deny = append(s.deny, tail)
		} else {
			s.outside = true
		}
	} else {
		// A relative path with no workspace to place it: outside only when it climbs out.
		s.outside = resolved == ".." || strings.HasPrefix(resolved, "../")
	}
	return s
}

// expandHome replaces a leading ~ or $HOME of a path pattern with home.
func expandHome(pattern, home string) string {
	if home == "" {
		return pattern
	}
	home = strings.TrimSuffix(normalise(home), "/")
	for _, prefix := range []string{"~", "$HOME", "${HOME}"} {
		if pattern == prefix {
			return home
		}
		if strings.HasPrefix(pattern, prefix+"/") || strings.HasPrefix(pattern, prefix+`\`) {
			return home + "/" + pattern[len(prefix)+1:]
		}
	}
	return pattern
}

// matchPath reports whether a path rule's pattern matches the resource: any plain spelling
// for every action, any deny spelling for a deny.
func matchPath(pattern string, a Action, s pathSpellings, home string) bool {
	p := expandHome(pattern, home)
	if p != "*" {
		// Normalise the pattern's separators and . segments the same way, keeping a trailing
		// "/*" meaningful.
		p = normalise(p)
	}
	candidates := s.plain
	if a == Deny {
		candidates = s.deny
	}
	for _, c := range candidates {
		if matchWildcard(p, c) || matchWildcard(pattern, c) {
			return true
		}
	}
	return false
}
