package bus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the durable bus's collectors (docs/server.md, "Metrics"): how many commands wait
// for the workers, per command; how many were delivered again; how many dead reply queues were
// dropped.
type Metrics struct {
	depth        *depthCollector
	redeliveries *prometheus.CounterVec
	dropped      prometheus.Counter
}

// NewMetrics creates the collectors, registered with reg when it is not nil. The queue depth
// is read from the database at each scrape, once a transport is started with these metrics.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		depth: &depthCollector{
			depth: prometheus.NewDesc("zuno_bus_queue_depth",
				"Commands on the durable bus not yet taken by the workers' consumer group, by command (read from the database at each scrape).",
				[]string{"command"}, nil),
			oldest: prometheus.NewDesc("zuno_bus_oldest_command_age_seconds",
				"Age of the oldest command on the durable bus the workers' consumer group has not taken, by command (0 when none waits).",
				[]string{"command"}, nil)},
		redeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_bus_redeliveries_total",
			Help: "Commands a worker of this process received that had been delivered before (to a worker that crashed or nacked), by command.",
		}, []string{"command"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zuno_bus_reply_queues_dropped_total",
			Help: "Reply queues of dead processes this process dropped.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.depth, m.redeliveries, m.dropped)
	}
	return m
}

// deliveriesTable counts the deliveries of each command message, across processes: a
// worker's in-memory count would miss the redelivery that matters, the one after a crash,
// which another process (or the restarted one) receives. Rows are forgotten after a day.
const deliveriesTable = "zuno_bus_deliveries"

// countDelivery records a delivery of a command message, outside the subscriber's
// transaction so that it survives the crash it is there to see, and counts a redelivery when
// the message was delivered before. It runs before the handler, not beside it: recorded
// later, the delivery of a worker that crashed at once would be missed (it costs a few ms per
// command, BenchmarkCommandRoundTrip).
func (p *Postgres) countDelivery(command string) func(*message.Message) {
	return func(msg *message.Message) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var n int
		err := p.db.QueryRowContext(ctx, `INSERT INTO `+deliveriesTable+` (message_uuid, command) VALUES ($1, $2)
			ON CONFLICT (message_uuid) DO UPDATE SET deliveries = `+deliveriesTable+`.deliveries + 1
			RETURNING deliveries`, msg.UUID, command).Scan(&n)
		if err != nil {
			p.logger.Error("count a command delivery", err, nil) // a metric, never a reason to stop
			return
		}
		if n > 1 {
			p.cfg.Metrics.redeliveries.WithLabelValues(command).Inc()
		}
	}
}

// depthCollector reads the queue depth of every command topic at each scrape.
type depthCollector struct {
	depth, oldest *prometheus.Desc
	mu            sync.Mutex
	p             *Postgres
}

func (c *depthCollector) attach(p *Postgres) {
	c.mu.Lock()
	c.p = p
	c.mu.Unlock()
}

func (c *depthCollector) detach(p *Postgres) {
	c.mu.Lock()
	if c.p == p {
		c.p = nil
	}
	c.mu.Unlock()
}

func (c *depthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.depth; ch <- c.oldest }

// Collect reports nothing when the database does not answer: a failed scrape would hide every
// other metric of the process.
func (c *depthCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	p := c.p
	c.mu.Unlock()
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	depths, err := p.QueueDepth(ctx)
	if err != nil {
		p.logger.Error("read the bus queue depth", err, nil)
		return
	}
	for command, q := range depths {
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(q.Depth), command)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, q.OldestSeconds, command)
	}
}

// commandTablePrefix starts the table of every command topic (commands.commandTopic).
const commandTablePrefix = "watermill_zuno.commands."

// Queue is what waits on one command's topic.
type Queue struct {
	Depth int64
	// OldestSeconds is the age of the oldest command waiting, by the database's clock; 0 when
	// none waits.
	OldestSeconds float64
}

// QueueDepth returns, per command, what the workers' consumer group has not taken yet: the
// rows of its topic table after the group's acknowledged offset (watermill-sql's order:
// transaction id, then offset), or all of them when no worker ever subscribed.
func (p *Postgres) QueueDepth(ctx context.Context) (map[string]Queue, error) {
	rows, err := p.db.QueryContext(ctx, `SELECT t.tablename, to_regclass(quote_ident('watermill_offsets_' || substr(t.tablename, 11))) IS NOT NULL
		FROM pg_tables t WHERE t.schemaname = current_schema() AND t.tablename LIKE 'watermill\_zuno.commands.%'`)
	if err != nil {
		return nil, err
	}
	type topic struct {
		table   string
		offsets bool
	}
	var topics []topic
	for rows.Next() {
		var t topic
		if err := rows.Scan(&t.table, &t.offsets); err != nil {
			rows.Close()
			return nil, err
		}
		topics = append(topics, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]Queue, len(topics))
	for _, t := range topics {
		messages := pq.QuoteIdentifier(t.table)
		// created_at is a timestamp without time zone of the inserting session, compared with
		// this session's: Zuno's processes all use the server's default time zone.
		q := `SELECT count(*), COALESCE(EXTRACT(EPOCH FROM localtimestamp - min(m.created_at)), 0) FROM ` + messages + ` m`
		var args []any
		if t.offsets {
			q += ` WHERE NOT EXISTS (SELECT 1 FROM ` + pq.QuoteIdentifier("watermill_offsets_"+strings.TrimPrefix(t.table, "watermill_")) + ` o
				WHERE o.consumer_group = $1 AND (m.transaction_id < o.last_processed_transaction_id
				OR (m.transaction_id = o.last_processed_transaction_id AND m."offset" <= o.offset_acked)))`
			args = append(args, WorkerGroup)
		}
		var queue Queue
		if err := p.db.QueryRowContext(ctx, q, args...).Scan(&queue.Depth, &queue.OldestSeconds); err != nil {
			return nil, fmt.Errorf("queue depth of %s: %w", t.table, err)
		}
		out[strings.TrimPrefix(t.table, commandTablePrefix)] = queue
	}
	return out, nil
}
