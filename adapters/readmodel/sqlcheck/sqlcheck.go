// Package sqlcheck is the front door of `zuno db` (docs/readmodels.md): it accepts exactly one
// statement, which is not one of the other statements (writes, DDL, PRAGMA, ATTACH,
// transaction control, …). It is not the boundary — the database is (a read-only
// SQLite connection behind an authorizer, a Postgres role that may only SELECT) — but it
// refuses early, with a message that says what is allowed, what the engine would refuse late.
package sqlcheck

import (
	"strings"
	"unicode"
)

// Dialect selects the lexical rules: Postgres has dollar quotes and nested comments.
type Dialect int

const (
	SQLite Dialect = iota
	Postgres
)

// Stable codes of Refused.
const (
	// CodeEmpty: zuno db was given no statement, only blanks or comments.
	CodeEmpty = "empty_query"
	// CodeMultiple: more than one statement; zuno db runs exactly one query.
	CodeMultiple = "multiple_statements"
	// CodeNotQuery: the statement is not a query (SELECT, WITH … SELECT, VALUES). It is the
	// code of adapters/readmodel.CodeReadOnly, which users and scripts already match for a
	// statement that writes.
	CodeNotQuery = "read_only"
)

// Refused is SQL that `zuno db` does not run. Nothing was sent to the database.
type Refused struct {
	code   string
	detail string
}

func (e *Refused) Error() string {
	return e.code + ": " + e.detail + "; zuno db runs exactly one query (SELECT, WITH … SELECT, VALUES) " +
		"over the read models, read-only, and refuses transaction control, PRAGMA, ATTACH, VACUUM, DDL and writes"
}

// Code returns the stable error code.
func (e *Refused) Code() string { return e.code }

// statements are the keywords that begin a statement other than a query, on either dialect.
// A word that is neither these nor a query's goes to the database, which refuses it as a
// syntax error (query_failed) — or, were it a statement this list lacks, as a write.
var statements = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`INSERT UPDATE DELETE REPLACE MERGE UPSERT CREATE DROP ALTER TRUNCATE
		GRANT REVOKE COMMENT SECURITY REFRESH CLUSTER REINDEX VACUUM ANALYZE ANALYSE CHECKPOINT
		PRAGMA ATTACH DETACH BEGIN START COMMIT END ROLLBACK ABORT SAVEPOINT RELEASE PREPARE
		EXECUTE DEALLOCATE DISCARD SET RESET DO COPY CALL LOCK LOAD LISTEN NOTIFY UNLISTEN
		EXPLAIN DECLARE FETCH MOVE CLOSE IMPORT REASSIGN`) {
		statements[w] = true
	}
}

// Check returns the single statement in sql, without a trailing semicolon, or why it is refused.
func Check(sql string, d Dialect) (string, error) {
	end, err := statementEnd(sql, d)
	if err != nil {
		return "", err
	}
	stmt := sql[:end]
	word := firstWord(stmt, d)
	if word == "" {
		return "", &Refused{CodeEmpty, "no statement given"}
	}
	if statements[word] || !(unicode.IsLetter(rune(word[0])) || word[0] == '_') {
		return "", &Refused{CodeNotQuery, "the statement begins with " + word + ", not a query"}
	}
	return stmt, nil
}

// statementEnd returns where the first statement ends: at a semicolon outside quotes and
// comments, after which only blanks and comments may follow, or at the end of sql.
func statementEnd(sql string, d Dialect) (int, error) {
	for i := 0; i < len(sql); {
		if sql[i] == ';' {
			if firstWord(sql[i+1:], d) != "" {
				return 0, &Refused{CodeMultiple, "more than one statement (a semicolon followed by more SQL)"}
			}
			return i, nil
		}
		next, err := skipToken(sql, i, d)
		if err != nil {
			return 0, err
		}
		i = next
	}
	return len(sql), nil
}

// skipToken returns the index after the token at i: a quoted string or identifier, a comment,
// or one byte.
func skipToken(sql string, i int, d Dialect) (int, error) {
	switch c := sql[i]; {
	case c == '\'' || c == '"' || c == '`' || (c == '[' && d == SQLite):
		closer := c
		if c == '[' {
			closer = ']'
		}
		return skipQuoted(sql, i, closer, d == Postgres && c == '\'' && i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e'))
	case c == '-' && strings.HasPrefix(sql[i:], "--"):
		if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
			return i + j + 1, nil
		}
		return len(sql), nil
	case c == '/' && strings.HasPrefix(sql[i:], "/*"):
		return skipBlockComment(sql, i, d)
	case c == '$' && d == Postgres:
		return skipDollar(sql, i), nil
	}
	return i + 1, nil
}

// skipQuoted skips a quoted run whose closer is doubled to escape it (and, in a Postgres
// E'…' string, backslash-escaped).
func skipQuoted(sql string, i int, closer byte, backslash bool) (int, error) {
	for j := i + 1; j < len(sql); j++ {
		switch {
		case backslash && sql[j] == '\\':
			j++
		case sql[j] == closer:
			if j+1 < len(sql) && sql[j+1] == closer {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	return len(sql), nil // unterminated: the database refuses it as a syntax error
}

// skipBlockComment skips /* … */; Postgres nests them, SQLite does not.
func skipBlockComment(sql string, i int, d Dialect) (int, error) {
	depth := 0
	for j := i; j < len(sql)-1; j++ {
		switch {
		case sql[j] == '/' && sql[j+1] == '*' && (depth == 0 || d == Postgres):
			depth++
			j++
		case sql[j] == '*' && sql[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	// SQLite ends an unterminated comment at the end of input; Postgres refuses it.
	return len(sql), nil
}

// skipDollar skips a Postgres dollar-quoted string ($tag$ … $tag$), or a lone $ (a parameter
// such as $1, which a query without arguments cannot use anyway).
func skipDollar(sql string, i int) int {
	j := i + 1
	for j < len(sql) && (sql[j] == '_' || unicode.IsLetter(rune(sql[j])) || (j > i+1 && unicode.IsDigit(rune(sql[j])))) {
		j++
	}
	if j >= len(sql) || sql[j] != '$' {
		return i + 1
	}
	tag := sql[i : j+1]
	if k := strings.Index(sql[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag)
	}
	return len(sql) // unterminated: Postgres refuses it
}

// skipBlank drops leading blanks, comments and opening parentheses (a query may be
// parenthesised).
func skipBlank(sql string, d Dialect) string {
	for {
		t := strings.TrimLeftFunc(sql, func(r rune) bool { return unicode.IsSpace(r) || r == '(' })
		switch {
		case strings.HasPrefix(t, "--"):
			j := strings.IndexByte(t, '\n')
			if j < 0 {
				return ""
			}
			sql = t[j+1:]
		case strings.HasPrefix(t, "/*"):
			j, err := skipBlockComment(t, 0, d)
			if err != nil {
				return ""
			}
			sql = t[j:]
		default:
			return t
		}
	}
}

// firstWord returns the first keyword of sql, upper-cased, or "" when there is none; a
// statement that begins with something other than a word returns that byte.
func firstWord(sql string, d Dialect) string {
	t := skipBlank(sql, d)
	if t == "" {
		return ""
	}
	n := strings.IndexFunc(t, func(r rune) bool { return !(unicode.IsLetter(r) || r == '_') })
	if n < 0 {
		n = len(t)
	}
	if n == 0 {
		return t[:1]
	}
	return strings.ToUpper(t[:n])
}
