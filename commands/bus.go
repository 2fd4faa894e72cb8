package commands

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	wmetrics "github.com/ThreeDotsLabs/watermill/components/metrics"
	"github.com/ThreeDotsLabs/watermill/components/requestreply"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// Transport is the Watermill pub/sub the bus runs on: in-process GoChannel by default, or a
// durable one (watermill-sql on Postgres) when several workers share a store.
type Transport struct {
	Publisher message.Publisher
	// CommandSubscriber returns the subscriber a handler consumes its command topic with.
	// Durable transports give all workers of one handler one consumer group, so each command
	// is handled once.
	CommandSubscriber func(handlerName string) (message.Subscriber, error)
	// ReplyAddress tells workers where this sender's replies go; it travels in each
	// command's metadata. Empty for an in-process transport.
	ReplyAddress string
	// ReplyPublishTopic is the topic a worker publishes a reply on, from the sender's reply
	// address and the operation id.
	ReplyPublishTopic func(replyAddress, operationID string) string
	// ReplySubscriber and ReplySubscribeTopic are where this sender waits for the reply to an
	// operation.
	ReplySubscriber     func() (message.Subscriber, error)
	ReplySubscribeTopic func(operationID string) string
	// NoWorkerAfter bounds how long a sender waits for a reply before it says no worker has
	// taken the command (NoWorkerError); zero waits ReplyTimeout. Only a transport whose
	// handlers may not be running (workers elsewhere) sets it.
	NoWorkerAfter time.Duration
	// ReplyTimeout bounds any wait for a reply (CommandPendingError after it); zero is
	// DefaultReplyTimeout.
	ReplyTimeout time.Duration
}

// replyAddressKey is the command metadata naming where its reply goes.
const replyAddressKey = "zuno_reply_to"

// Bus sends commands to their handlers and returns their results.
type Bus struct {
	router  *message.Router
	sender  *cqrs.CommandBus
	replies *requestreply.PubSubBackend[Result]
	cancel  context.CancelFunc
	done    chan struct{}
	// noWorkerAfter is Transport.NoWorkerAfter for a bus that only sends; zero otherwise.
	noWorkerAfter time.Duration
}

// DefaultReplyTimeout bounds how long Send waits for a handler.
const DefaultReplyTimeout = 2 * time.Minute

func commandTopic(commandName string) string { return "zuno.commands." + commandName }

// StartBus starts a bus on t. When h is not nil this process also handles commands (the
// embedded default); with nil it only sends them to workers elsewhere.
func StartBus(ctx context.Context, h *Handlers, t Transport, logger watermill.LoggerAdapter) (*Bus, error) {
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	marshaler := cqrs.JSONMarshaler{GenerateName: cqrs.StructName}
	replies, err := replyBackend(t, logger)
	if err != nil {
		return nil, err
	}
	sender, err := commandSender(t, marshaler, logger)
	if err != nil {
		return nil, err
	}
	b := &Bus{sender: sender, replies: replies, done: make(chan struct{})}
	if h == nil {
		b.noWorkerAfter = t.NoWorkerAfter
		close(b.done)
		return b, nil
	}
	router, err := commandRouter(h, t, replies, marshaler, logger)
	if err != nil {
		return nil, err
	}
	if err := b.run(ctx, router, logger); err != nil {
		return nil, err
	}
	return b, nil
}

// replyBackend carries each command's Result back to the process that sent it.
func replyBackend(t Transport, logger watermill.LoggerAdapter) (*requestreply.PubSubBackend[Result], error) {
	timeout := DefaultReplyTimeout
	if t.ReplyTimeout > 0 {
		timeout = t.ReplyTimeout
	}
	return requestreply.NewPubSubBackend(requestreply.PubSubBackendConfig{
		Publisher: t.Publisher,
		SubscriberConstructor: func(requestreply.PubSubBackendSubscribeParams) (message.Subscriber, error) {
			return t.ReplySubscriber()
		},
		GeneratePublishTopic: func(p requestreply.PubSubBackendPublishParams) (string, error) {
			return t.ReplyPublishTopic(p.CommandMessage.Metadata.Get(replyAddressKey), string(p.OperationID)), nil
		},
		GenerateSubscribeTopic: func(p requestreply.PubSubBackendSubscribeParams) (string, error) {
			return t.ReplySubscribeTopic(string(p.OperationID)), nil
		},
		Logger:                logger,
		ListenForReplyTimeout: &timeout,
		// Handlers put typed errors into the Result; a returned error means the reply could not
		// be produced at all, and the command is acked all the same: it is idempotent, and the
		// sender retries with the same id if it wants to.
		AckCommandErrors: true,
	}, requestreply.BackendPubsubJSONMarshaler[Result]{})
}

// commandSender publishes commands, each stamped with the address its reply goes to, and
// marked published once the transport has taken it (Send tells a command that never left
// from one whose reply did not come).
func commandSender(t Transport, marshaler cqrs.CommandEventMarshaler, logger watermill.LoggerAdapter) (*cqrs.CommandBus, error) {
	return cqrs.NewCommandBusWithConfig(markingPublisher{t.Publisher}, cqrs.CommandBusConfig{
		GeneratePublishTopic: func(p cqrs.CommandBusGeneratePublishTopicParams) (string, error) {
			return commandTopic(p.CommandName), nil
		},
		OnSend: func(p cqrs.CommandBusOnSendParams) error {
			p.Message.Metadata.Set(replyAddressKey, t.ReplyAddress)
			return nil
		},
		Marshaler: marshaler,
		Logger:    logger,
	})
}

// commandRouter routes each command type to its handler, replying with the handler's Result.
func commandRouter(h *Handlers, t Transport, replies *requestreply.PubSubBackend[Result], marshaler cqrs.CommandEventMarshaler, logger watermill.LoggerAdapter) (*message.Router, error) {
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, logger)
	if err != nil {
		return nil, err
	}
	if h.metrics != nil && h.metrics.reg != nil {
		// Watermill's own router metrics, from its module (no new dependency), beside ours:
		// handler time, messages received acked or nacked, reply publish time
		// (docs/server.md, "Metrics").
		wmetrics.NewPrometheusMetricsBuilder(h.metrics.reg, "zuno", "watermill").AddPrometheusRouterMetrics(router)
	}
	processor, err := cqrs.NewCommandProcessorWithConfig(router, cqrs.CommandProcessorConfig{
		GenerateSubscribeTopic: func(p cqrs.CommandProcessorGenerateSubscribeTopicParams) (string, error) {
			return commandTopic(p.CommandName), nil
		},
		SubscriberConstructor: func(p cqrs.CommandProcessorSubscriberConstructorParams) (message.Subscriber, error) {
			return t.CommandSubscriber(p.HandlerName)
		},
		Marshaler: marshaler,
		Logger:    logger,
	})
	if err != nil {
		return nil, err
	}
	return router, processor.AddHandlers(h.routes(replies)...)
}

// routes are the commands the bus handles, each handler wrapped in the metrics decorator here,
// where the bus is assembled.
func (h *Handlers) routes(replies *requestreply.PubSubBackend[Result]) []cqrs.CommandHandler {
	return []cqrs.CommandHandler{
		route(h, replies, "CreateSession", h.CreateSession),
		route(h, replies, "SetSessionTitle", h.SetSessionTitle),
		route(h, replies, "AppendUserMessage", h.AppendUserMessage),
		route(h, replies, "UpdatePlan", h.UpdatePlan),
		route(h, replies, "UpdateTodos", h.UpdateTodos),
		route(h, replies, "UpdateGoal", h.UpdateGoal),
		route(h, replies, "ResumeGoal", h.ResumeGoal),
		route(h, replies, "AnswerGoalInput", h.AnswerGoalInput),
		route(h, replies, "AnswerPermission", h.AnswerPermission),
		route(h, replies, "ForkSession", h.ForkSession),
		route(h, replies, "InterruptTurn", h.InterruptTurn),
		route(h, replies, "RevokeGrants", h.RevokeGrants),
		route(h, replies, "RecordAnchor", h.RecordAnchor),
		route(h, replies, "ReviewMemory", h.ReviewMemory),
	}
}

// route is one command's handler on the bus, decorated, replying with its Result.
func route[C any](h *Handlers, replies *requestreply.PubSubBackend[Result], name string, handler HandlerFunc[C]) cqrs.CommandHandler {
	return requestreply.NewCommandHandlerWithResult(name, replies, Measured(h.metrics, name, handler))
}

// run starts the router in the background, detached from ctx's cancellation (Close stops
// it), and returns once it is running.
func (b *Bus) run(ctx context.Context, router *message.Router, logger watermill.LoggerAdapter) error {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.router, b.cancel = router, cancel
	go func() {
		defer close(b.done)
		if err := router.Run(runCtx); err != nil {
			logger.Error("command router stopped", err, nil)
		}
	}()
	select {
	case <-router.Running():
		return nil
	case <-b.done:
		return errors.New("command router failed to start")
	case <-ctx.Done():
		cancel()
		return ctx.Err()
	}
}

// Send delivers cmd (one of this package's command types, by pointer) and waits for its
// result. The error is about delivery; the command's own outcome is Result.Err(). A command
// that was sent but whose reply did not come (ctx ended, or the wait timed out) may still be
// applied: the error is CommandPendingError, or NoWorkerError when the sender's no-worker
// bound ran out (docs/storage.md, "The command bus and workers").
func (b *Bus) Send(ctx context.Context, cmd any) (Result, error) {
	published := new(atomic.Bool)
	ctx = context.WithValue(ctx, publishedKey{}, published)
	waitCtx := ctx
	if b.noWorkerAfter > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, b.noWorkerAfter)
		defer cancel()
	}
	reply, err := requestreply.SendWithReply[Result](waitCtx, b.sender, b.replies, cmd)
	var timedOut requestreply.ReplyTimeoutError
	noReply := err != nil || errors.As(reply.Error, &timedOut)
	switch {
	case noReply && published.Load() && ctx.Err() == nil && waitCtx.Err() != nil:
		// The command is stored and stays queued: a worker that starts later applies it once.
		return Result{}, &NoWorkerError{Waited: b.noWorkerAfter, CommandID: commandIDOf(cmd)}
	case noReply && published.Load():
		cause := err
		if cause == nil {
			cause = timedOut
		}
		if ctx.Err() != nil {
			cause = ctx.Err()
		}
		return Result{}, &CommandPendingError{CommandID: commandIDOf(cmd), Cause: cause}
	case err != nil:
		return Result{}, fmt.Errorf("send %T: %w", cmd, err)
	case reply.Error != nil:
		return reply.HandlerResult, fmt.Errorf("send %T: %w", cmd, reply.Error)
	}
	return reply.HandlerResult, nil
}

// publishedKey marks, in a Send's context, that its command reached the transport.
type publishedKey struct{}

// markingPublisher marks each command it published in the flag its message's context holds.
type markingPublisher struct{ message.Publisher }

func (p markingPublisher) Publish(topic string, msgs ...*message.Message) error {
	if err := p.Publisher.Publish(topic, msgs...); err != nil {
		return err
	}
	for _, m := range msgs {
		if f, ok := m.Context().Value(publishedKey{}).(*atomic.Bool); ok {
			f.Store(true)
		}
	}
	return nil
}

// commandIDOf is a command's id, from its Meta.
func commandIDOf(cmd any) string {
	if c, ok := cmd.(interface{ commandID() string }); ok {
		return c.commandID()
	}
	return ""
}

// Close stops handling commands, letting those in flight finish.
func (b *Bus) Close() error {
	if b.router == nil {
		return nil
	}
	err := b.router.Close()
	b.cancel()
	<-b.done
	return err
}

// GoChannelTransport runs the bus in process: commands and replies never leave it.
func GoChannelTransport(pubsub *gochannel.GoChannel) Transport {
	return Transport{
		Publisher:         pubsub,
		CommandSubscriber: func(string) (message.Subscriber, error) { return pubsub, nil },
		// One topic per operation: a reply reaches only the request waiting for it.
		ReplyPublishTopic:   func(_, op string) string { return ReplyTopic(op) },
		ReplySubscriber:     func() (message.Subscriber, error) { return pubsub, nil },
		ReplySubscribeTopic: ReplyTopic,
	}
}

// ReplyTopic is the in-process topic the reply to an operation arrives on.
func ReplyTopic(operationID string) string { return "zuno.replies." + operationID }

// NewGoChannel returns the in-process pub/sub the embedded default uses.
func NewGoChannel(logger watermill.LoggerAdapter) *gochannel.GoChannel {
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	return gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: 256}, logger)
}
