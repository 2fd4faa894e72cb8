package readmodel

import (
	"errors"

	"modernc.org/sqlite"
)

// tooBig reports SQLite refusing a value over SQLITE_LIMIT_LENGTH (SQLITE_TOOBIG): for a user
// query, a value longer than its result may be (valueLimit).
func tooBig(err error) bool {
	var liteErr *sqlite.Error
	return errors.As(err, &liteErr) && liteErr.Code()&0xff == 18
}
