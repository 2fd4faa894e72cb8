package bus

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"time"

	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/lib/pq"
)

// Reply queues of dead processes (docs/storage.md, "Reply queues"). Each sending process has a
// reply table, watermill_zuno_replies_<random>; a process killed before its Close leaves it
// behind. Which tables belong to live processes is known from a registry every process
// heartbeats: a table is dropped when its row's heartbeat is older than DeadAfter (by the
// database's clock, so hosts' clocks do not matter), when its holder is a process of this host
// that has exited (Config.Gone), or when it has no row at all (left by a build before the
// registry, or re-created by a worker replying to a dead process). A live process heartbeats
// even while idle, so its queue is never dropped while it heartbeats; one whose heartbeat
// stalled past DeadAfter finds its row gone at its next heartbeat and registers and creates its
// queue again (a reply published in between is lost, and its sender is told the command may
// still be applied: command_pending).

const (
	// replyPrefix starts every reply address; its table is watermill_ + the address.
	replyPrefix = "zuno_replies_"
	// registryTable holds one row per live reply queue.
	registryTable = "zuno_bus_reply_queues"
	// DefaultHeartbeat is how often a process marks its queue alive and cleans dead ones.
	DefaultHeartbeat = 10 * time.Second
	// DefaultDeadAfter is how long a queue without a heartbeat is kept: six missed beats, so
	// a process paused by a slow database or a stop-the-world moment is not taken for dead.
	DefaultDeadAfter = time.Minute
	// cleanLock is the advisory lock cleaning holds, so processes starting together clean one
	// after the other rather than dropping the same tables at once.
	cleanLock int64 = 0x7a756e6f_6275_73 // "zuno" "bus"
)

func replyTable(address string) string { return wsql.PostgreSQLQueueSchema{}.MessagesTable(address) }

// startRegistry creates the registry (and the deliveries table), cleans the queues of dead
// processes and registers this one, before its reply table exists: a table is never seen
// without its row, except an orphan.
func (p *Postgres) startRegistry(ctx context.Context) error {
	if err := p.createSchema(ctx); err != nil {
		return fmt.Errorf("create the reply-queue registry: %w", err)
	}
	if _, err := p.Clean(ctx); err != nil {
		// Cleaning is housekeeping: a failure leaves tables for the next one, it does not
		// stop the process.
		p.logger.Error("drop the reply queues of dead processes", err, nil)
	}
	return p.register(ctx)
}

func (p *Postgres) createSchema(ctx context.Context) error {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Under the lock: concurrent CREATE TABLE IF NOT EXISTS can fail on Postgres's catalogue.
	for _, q := range []string{
		`SELECT pg_advisory_xact_lock(` + fmt.Sprint(cleanLock) + `)`,
		`CREATE TABLE IF NOT EXISTS ` + registryTable + ` (
			address TEXT PRIMARY KEY,
			holder TEXT NOT NULL DEFAULT '',
			started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
			heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
		`CREATE TABLE IF NOT EXISTS ` + deliveriesTable + ` (
			message_uuid TEXT PRIMARY KEY,
			command TEXT NOT NULL,
			deliveries INT NOT NULL DEFAULT 1,
			first_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (p *Postgres) register(ctx context.Context) error {
	_, err := p.db.ExecContext(ctx, `INSERT INTO `+registryTable+` (address, holder) VALUES ($1, $2)
		ON CONFLICT (address) DO UPDATE SET heartbeat_at = now()`, p.address, p.cfg.Holder)
	if err != nil {
		return fmt.Errorf("register the reply queue: %w", err)
	}
	return nil
}

// heartbeat marks this process's queue alive and cleans dead ones, every Config.Heartbeat,
// until ctx ends.
func (p *Postgres) heartbeat(ctx context.Context) {
	defer p.wg.Done()
	t := time.NewTicker(p.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := p.beat(ctx); err != nil && ctx.Err() == nil {
			p.logger.Error("heartbeat the reply queue", err, nil)
		}
		if _, err := p.Clean(ctx); err != nil && ctx.Err() == nil {
			p.logger.Error("drop the reply queues of dead processes", err, nil)
		}
	}
}

// beat renews this process's row; when a cleaner took it for dead (its heartbeats stalled),
// it registers and creates its queue again.
func (p *Postgres) beat(ctx context.Context) error {
	res, err := p.db.ExecContext(ctx, `UPDATE `+registryTable+` SET heartbeat_at = now() WHERE address = $1`, p.address)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	p.logger.Info("reply queue was dropped as dead; registering it again", nil)
	if err := p.register(ctx); err != nil {
		return err
	}
	return p.replySub.SubscribeInitialize(p.address)
}

// Clean drops the reply queues of dead processes (see the top of this file) and forgets
// deliveries older than a day, in one transaction under an advisory lock, and returns the
// addresses it dropped. It never drops this process's own queue.
func (p *Postgres) Clean(ctx context.Context) ([]string, error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// A worker inserting a reply into a table being dropped holds it a moment; a long wait
	// means something else holds it, and the next cleaning tries again.
	for _, q := range []string{`SELECT pg_advisory_xact_lock(` + fmt.Sprint(cleanLock) + `)`, `SET LOCAL lock_timeout = '5s'`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+registryTable+` WHERE address <> $1 AND heartbeat_at < now() - make_interval(secs => $2)`,
		p.address, p.cfg.DeadAfter.Seconds()); err != nil {
		return nil, err
	}
	if err := p.forgetExited(ctx, tx); err != nil {
		return nil, err
	}
	// One statement, one snapshot: a table it sees was created after its row was committed
	// (register runs first), so a live process's table is never taken for an orphan.
	rows, err := tx.QueryContext(ctx, `SELECT tablename FROM pg_tables
		WHERE schemaname = current_schema() AND tablename LIKE 'watermill\_zuno\_replies\_%'
		AND NOT EXISTS (SELECT 1 FROM `+registryTable+` r WHERE 'watermill_' || r.address = tablename)`)
	if err != nil {
		return nil, err
	}
	var dropped []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			rows.Close()
			return nil, err
		}
		dropped = append(dropped, table[len("watermill_"):])
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, address := range dropped {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+replyTable(address)); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+deliveriesTable+` WHERE first_at < now() - interval '1 day'`); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	if p.cfg.Metrics != nil {
		p.cfg.Metrics.dropped.Add(float64(len(dropped)))
	}
	return dropped, nil
}

// forgetExited deletes the rows whose holder Config.Gone says has exited.
func (p *Postgres) forgetExited(ctx context.Context, tx *stdsql.Tx) error {
	if p.cfg.Gone == nil {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT address, holder FROM `+registryTable+` WHERE address <> $1 AND holder <> ''`, p.address)
	if err != nil {
		return err
	}
	var gone []string
	for rows.Next() {
		var address, holder string
		if err := rows.Scan(&address, &holder); err != nil {
			rows.Close()
			return err
		}
		if p.cfg.Gone(holder) {
			gone = append(gone, address)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(gone) == 0 {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM `+registryTable+` WHERE address = ANY($1)`, pq.Array(gone))
	return err
}
