// Package bus provides the durable Watermill transport for the command bus: watermill-sql on
// PostgreSQL, for several worker processes sharing one event store. (The embedded default
// runs in process on Watermill's GoChannel; see commands.GoChannelTransport.)
package bus

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/google/uuid"

	"github.com/zuno-run/zuno/commands"
)

// WorkerGroup is the consumer group of command handlers: all workers share it, so each
// command is handled by exactly one of them.
const WorkerGroup = "zuno-workers"

// Postgres is a durable command transport on one PostgreSQL database.
//
//   - Commands go to one table per command type (watermill-sql's default schema, whose
//     transaction-id watermark never skips a message that commits late); workers consume them
//     in one consumer group. A command a worker took but did not acknowledge (it crashed) is
//     delivered again, which is safe: handlers are idempotent by command id.
//   - Replies go to a queue table of the sending process (its reply address), deleted once
//     read; one subscriber per process hands each reply to the request waiting for it.
//   - Each sending process registers its reply queue in zuno_bus_reply_queues and heartbeats
//     it; a queue whose process stopped heartbeating (or, on this host, exited) is dropped at
//     start and periodically (replies.go).
type Postgres struct {
	db       *stdsql.DB
	cfg      Config
	logger   watermill.LoggerAdapter
	pub      *wsql.Publisher
	address  string
	local    *gochannel.GoChannel
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	replySub *wsql.Subscriber
}

// Config tunes the transport; the zero value is the defaults.
type Config struct {
	Logger watermill.LoggerAdapter
	// Holder names this process in the reply-queue registry (host/pid/random, as turn leases
	// name theirs), and Gone says whether a holder is a process of this host that has exited:
	// its queue is dropped at once rather than DeadAfter after its last heartbeat. Both are
	// optional.
	Holder string
	Gone   func(holder string) bool
	// Heartbeat is how often this process marks its reply queue alive and looks for dead ones
	// (default DefaultHeartbeat); DeadAfter is how long a queue without a heartbeat is kept
	// (default DefaultDeadAfter).
	Heartbeat, DeadAfter time.Duration
	// Metrics, when set, receives the bus's queue depth, redeliveries and dropped queues.
	Metrics *Metrics
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = watermill.NopLogger{}
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.DeadAfter <= 0 {
		c.DeadAfter = DefaultDeadAfter
	}
	return c
}

// pollInterval is how often an idle subscriber looks for new messages: the latency floor of a
// command and of its reply.
const pollInterval = 20 * time.Millisecond

// NewPostgres starts the transport on db (keep an idle connection for each poller: each
// subscribed topic polls in a transaction of its own): it drops the reply queues of dead processes,
// registers this process's own and heartbeats it. Close it to stop listening for replies and
// drop this process's reply table.
func NewPostgres(ctx context.Context, db *stdsql.DB, cfg Config) (*Postgres, error) {
	cfg = cfg.withDefaults()
	logger := cfg.Logger
	p := &Postgres{db: db, cfg: cfg, logger: logger,
		address: replyPrefix + strings.ReplaceAll(uuid.NewString(), "-", "")[:16],
		local:   gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: 64}, logger)}
	if err := p.startRegistry(ctx); err != nil {
		return nil, err
	}
	var err error
	p.pub, err = wsql.NewPublisher(wsql.BeginnerFromStdSQL(db), wsql.PublisherConfig{
		SchemaAdapter:        schemaFor{},
		AutoInitializeSchema: true,
	}, logger)
	if err != nil {
		return nil, err
	}
	p.replySub, err = wsql.NewSubscriber(wsql.BeginnerFromStdSQL(db), wsql.SubscriberConfig{
		SchemaAdapter:    wsql.PostgreSQLQueueSchema{}, // one reader: no consumer group
		OffsetsAdapter:   wsql.PostgreSQLQueueOffsetsAdapter{DeleteOnAck: true},
		InitializeSchema: true,
		BackoffManager:   wsql.NewDefaultBackoffManager(pollInterval, time.Second),
	}, logger)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	replies, err := p.replySub.Subscribe(runCtx, p.address)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("listen for replies: %w", err)
	}
	p.wg.Add(2)
	go p.forwardReplies(replies)
	go p.heartbeat(runCtx)
	if cfg.Metrics != nil {
		cfg.Metrics.depth.attach(p)
	}
	return p, nil
}

// forwardReplies hands each reply from this process's reply table to the in-process topic
// its request listens on.
func (p *Postgres) forwardReplies(replies <-chan *message.Message) {
	defer p.wg.Done()
	for msg := range replies {
		op := msg.Metadata.Get("_watermill_requestreply_op_id")
		fwd := message.NewMessage(msg.UUID, msg.Payload)
		for k, v := range msg.Metadata {
			fwd.Metadata.Set(k, v)
		}
		if err := p.local.Publish(commands.ReplyTopic(op), fwd); err != nil {
			p.logger.Error("forward reply", err, nil)
		}
		msg.Ack()
	}
}

// NoWorkerAfter is how long a sender waits for a worker's reply before it says that no
// worker has taken the command: a running worker answers within its poll interval (20 ms to
// 1 s idle), so a few seconds without a reply means none is running (docs/storage.md).
const NoWorkerAfter = 5 * time.Second

// Transport is the commands.Transport on this database.
func (p *Postgres) Transport() commands.Transport {
	return commands.Transport{
		Publisher:           p.pub,
		CommandSubscriber:   p.commandSubscriber,
		ReplyAddress:        p.address,
		ReplyPublishTopic:   func(address, _ string) string { return address },
		ReplySubscriber:     func() (message.Subscriber, error) { return p.local, nil },
		ReplySubscribeTopic: commands.ReplyTopic,
		NoWorkerAfter:       NoWorkerAfter,
	}
}

// commandSubscriber is the subscriber of one command's handler: the workers' consumer group,
// each delivery counted so that one delivered again is seen (metrics.go).
func (p *Postgres) commandSubscriber(handler string) (message.Subscriber, error) {
	sub, err := wsql.NewSubscriber(wsql.BeginnerFromStdSQL(p.db), wsql.SubscriberConfig{
		ConsumerGroup:    WorkerGroup,
		SchemaAdapter:    schemaFor{},
		OffsetsAdapter:   wsql.DefaultPostgreSQLOffsetsAdapter{},
		InitializeSchema: true,
		BackoffManager:   wsql.NewDefaultBackoffManager(pollInterval, time.Second),
	}, p.logger)
	if err != nil || p.cfg.Metrics == nil {
		return sub, err
	}
	return message.MessageTransformSubscriberDecorator(p.countDelivery(handler))(sub)
}

// Close stops listening for replies, drops this process's reply table and its registration
// (the table first: a registration without a table is harmless, a table without one is an
// orphan the next cleaning drops).
func (p *Postgres) Close() error {
	p.cancel()
	err := p.replySub.Close()
	p.wg.Wait()
	p.local.Close()
	if p.cfg.Metrics != nil {
		p.cfg.Metrics.depth.detach(p)
	}
	if _, derr := p.db.Exec(`DROP TABLE IF EXISTS ` + replyTable(p.address)); derr != nil && err == nil {
		err = derr
	}
	if _, derr := p.db.Exec(`DELETE FROM `+registryTable+` WHERE address = $1`, p.address); derr != nil && err == nil {
		err = derr
	}
	return err
}

// schemaFor is the publisher's schema, picked by topic: reply tables (one per sending process) are queues whose
// rows are deleted once read; command tables keep the log watermill-sql's default schema keeps.
type schemaFor struct{}

func (schemaFor) pick(topic string) wsql.SchemaAdapter {
	if strings.HasPrefix(topic, replyPrefix) {
		return wsql.PostgreSQLQueueSchema{}
	}
	return wsql.DefaultPostgreSQLSchema{}
}

func (s schemaFor) SchemaInitializingQueries(params wsql.SchemaInitializingQueriesParams) ([]wsql.Query, error) {
	return s.pick(params.Topic).SchemaInitializingQueries(params)
}

func (s schemaFor) InsertQuery(params wsql.InsertQueryParams) (wsql.Query, error) {
	return s.pick(params.Topic).InsertQuery(params)
}

func (s schemaFor) SelectQuery(params wsql.SelectQueryParams) (wsql.Query, error) {
	return s.pick(params.Topic).SelectQuery(params)
}

// UnmarshalMessage and SubscribeIsolationLevel serve subscribers, which are given their own
// schema; the publisher never calls them.
func (s schemaFor) UnmarshalMessage(params wsql.UnmarshalMessageParams) (wsql.Row, error) {
	return wsql.DefaultPostgreSQLSchema{}.UnmarshalMessage(params)
}

func (s schemaFor) SubscribeIsolationLevel() stdsql.IsolationLevel {
	return wsql.DefaultPostgreSQLSchema{}.SubscribeIsolationLevel()
}

// RequiresTransaction makes watermill-sql create tables in a transaction under its advisory
// lock (the default schema adds the lock), so workers starting together do not race on
// CREATE TABLE IF NOT EXISTS.
func (schemaFor) RequiresTransaction() bool { return true }
