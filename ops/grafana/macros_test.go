package grafana_test

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The Grafana macros a dashboard query may use, expanded as Grafana expands them before a
// query reaches its datasource (docs/operations.md, "Dashboards"). Anything else that starts
// with $ is refused: dashboards have no template variables, so a stray $ is a typo that
// Grafana would send to the database as it is.
//
// SQL (Grafana's PostgreSQL datasource):
//
//	$__timeFilter(expr)           expr BETWEEN '<from>' AND '<to>' (RFC 3339, UTC)
//	$__timeFrom(), $__timeTo()    '<from>', '<to>'
//	$__timeGroup(expr, 'iv')      floor(extract(epoch from expr)/s)*s, s the interval's seconds
//	$__timeGroupAlias(expr, 'iv') the same AS "time"
//
// PromQL (Grafana's Prometheus datasource): $__rate_interval, $__interval and $__range,
// replaced by durations.

type timeRange struct{ from, to time.Time }

var sqlMacro = regexp.MustCompile(`\$__([A-Za-z]+)\(`)

// expandSQL expands the SQL macros of q over r.
func expandSQL(q string, r timeRange) (string, error) {
	var b strings.Builder
	for {
		loc := sqlMacro.FindStringSubmatchIndex(q)
		if loc == nil {
			break
		}
		name := q[loc[2]:loc[3]]
		args, end, err := macroArgs(q, loc[1])
		if err != nil {
			return "", fmt.Errorf("$__%s: %w", name, err)
		}
		text, err := sqlMacroText(name, args, r)
		if err != nil {
			return "", err
		}
		b.WriteString(q[:loc[0]])
		b.WriteString(text)
		q = q[end:]
	}
	b.WriteString(q)
	out := b.String()
	if v := templateVariable.FindString(out); v != "" {
		return "", fmt.Errorf("%s is no macro Zuno's dashboards use (left in %q)", v, out)
	}
	return out, nil
}

// templateVariable is what Grafana would interpolate: $name, ${name} or [[name]]. A JSON
// path ('$.tool', '$[0]') is none, so json_extract's paths pass through as Grafana leaves them.
var templateVariable = regexp.MustCompile(`\$(?:\w+|\{)|\[\[\w+`)

func sqlMacroText(name string, args []string, r timeRange) (string, error) {
	from, to := quoteTime(r.from), quoteTime(r.to)
	switch {
	case name == "timeFilter" && len(args) == 1:
		return args[0] + " BETWEEN " + from + " AND " + to, nil
	case name == "timeFrom" && len(args) == 0:
		return from, nil
	case name == "timeTo" && len(args) == 0:
		return to, nil
	case (name == "timeGroup" || name == "timeGroupAlias") && len(args) == 2:
		iv, err := time.ParseDuration(strings.Trim(args[1], `'" `))
		if err != nil || iv < time.Second {
			return "", fmt.Errorf("$__%s: interval %s is not a duration of a second or more", name, args[1])
		}
		s := int64(iv / time.Second)
		text := fmt.Sprintf("floor(extract(epoch from %s)/%d)*%d", args[0], s, s)
		if name == "timeGroupAlias" {
			text += ` AS "time"`
		}
		return text, nil
	}
	return "", fmt.Errorf("$__%s with %d arguments is not a macro Zuno's dashboards use", name, len(args))
}

func quoteTime(t time.Time) string { return "'" + t.UTC().Format(time.RFC3339Nano) + "'" }

// macroArgs splits the arguments of a macro whose "(" ends at start, at the commas outside
// parentheses and quotes, and returns the index after its ")".
func macroArgs(q string, start int) ([]string, int, error) {
	depth, quoted, last := 0, false, start
	var args []string
	for i := start; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(q[last:i]))
			last = i + 1
		case c == ')' && depth > 0:
			depth--
		case c == ')':
			if a := strings.TrimSpace(q[last:i]); a != "" || len(args) > 0 {
				args = append(args, a)
			}
			return args, i + 1, nil
		}
	}
	return nil, 0, fmt.Errorf("no closing parenthesis")
}

// promVars are the PromQL variables, as Grafana sets them for a dashboard over the last five
// minutes of a Prometheus scraping every second (the test's): $__rate_interval is at least four
// scrape intervals, so a rate always has two samples.
var promVars = map[string]string{"rate_interval": "10s", "interval": "2s", "range": "5m"}

var promVar = regexp.MustCompile(`\$__([a-z_]+)`)

func expandPromQL(expr string) (string, error) {
	out := promVar.ReplaceAllStringFunc(expr, func(v string) string {
		if d, ok := promVars[v[len("$__"):]]; ok {
			return d
		}
		return v
	})
	if v := templateVariable.FindString(out); v != "" {
		return "", fmt.Errorf("%s is no variable Zuno's dashboards use (left in %q)", v, out)
	}
	return out, nil
}
