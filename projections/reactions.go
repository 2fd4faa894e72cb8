package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// ReactionCheckpoints keeps the reaction runner's checkpoints (commands/react) in the
// read-model database, table reaction_checkpoint: how far each reaction has read the log.
type ReactionCheckpoints struct{ DB *sqlx.DB }

// Load returns a reaction's checkpoint, 0 when it never ran.
func (c ReactionCheckpoints) Load(ctx context.Context, reaction string) (uint64, error) {
	var pos int64
	err := c.DB.QueryRowxContext(ctx, c.DB.Rebind(`SELECT position FROM reaction_checkpoint WHERE reaction = ?`), reaction).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the checkpoint of reaction %s: %w", reaction, err)
	}
	return uint64(pos), nil
}

// Save moves a reaction's checkpoint forward; it never goes back (two runners on one store
// save what each has done).
func (c ReactionCheckpoints) Save(ctx context.Context, reaction string, position uint64) error {
	_, err := c.DB.ExecContext(ctx, c.DB.Rebind(`INSERT INTO reaction_checkpoint (reaction, position) VALUES (?, ?)
		ON CONFLICT (reaction) DO UPDATE SET position = CASE WHEN excluded.position > reaction_checkpoint.position
			THEN excluded.position ELSE reaction_checkpoint.position END`), reaction, int64(position))
	if err != nil {
		return fmt.Errorf("save the checkpoint of reaction %s: %w", reaction, err)
	}
	return nil
}
