// Package app is the application as its faces (the CLI today, an HTTP server later) use it:
// one Application with the commands that change state and the queries that read it. It holds
// the application's decisions that are not a single aggregate's: which agent and workspace a
// turn runs with, creating a session before its first turn, what `zuno verify` checks (chains,
// anchors, read-model drift) and the read models' administration (catch-up, rebuild). A
// command never brings the read models up to its events: it returns the position of its last
// event, and a query that must see them waits for it (Queries.WaitFor, docs/storage.md).
// Adapters reach it only through the ports it is given.
package app

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Settings are the configuration the application acts on.
type Settings struct {
	// Model is the default model spec: openai/<model>, anthropic/<model> or scripted:<file>.
	Model         string
	ContextWindow int64
	MaxTokens     int
	Agents        map[string]agent.Override
	// Tools enables or disables tools by name; availability, not authorisation.
	Tools map[string]bool
	// ToolCalls is concurrency.tool_calls; 0 is the default.
	ToolCalls int
	// Bounds are the tool output limits in effect, recorded on each turn's start.
	Bounds *events.Bounds
	// Delegations is concurrency.delegations, the children that run at once; 0 is the
	// default.
	Delegations int
	// Permission and ToolSwitches are each configuration layer's "permission" and "tools"
	// values, in layer order: the permission policy is built from them (domain/permission).
	Permission, ToolSwitches []settings.Raw
	// Home is the user's home directory, resolved with the platform fallback when HOME is
	// unset: path rules expand ~ and $HOME with it and the risk gate protects it.
	Home string
	// FullAccess: sandbox.mode is danger-full-access, which makes the effective permission
	// mode allow_all (what debug permissions reports without assembling a sandbox).
	FullAccess bool
	// Zuno lists Zuno's own data the risk gate protects: the data directory and the event
	// database with its WAL, wherever the configuration puts them.
	Zuno []string
	// Own are Zuno's own files (database, data directory): a turn refuses a workspace that
	// holds them (docs/sandbox.md, "The log outside the agent's reach").
	Own sandbox.Locations
	// QuestionDefer is the deferral period of a waiting question; 0 is
	// DefaultQuestionDefer (docs/questions.md).
	QuestionDefer time.Duration
}

// Ports are the adapters the application works through, wired by the host.
type Ports struct {
	// Send delivers a command on the bus and returns its result.
	Send func(ctx context.Context, cmd any) (commands.Result, error)
	// Log is the event store; its head after a turn is the turn's result position.
	Log interface {
		queries.Log
		LastPosition(ctx context.Context) (uint64, error)
		// ChainGenesis is where the hash chain began (verify.Log).
		ChainGenesis(ctx context.Context) (uint64, error)
	}
	Driver *turn.Driver
	// OpenProvider opens a provider spec ("openai", "anthropic", "scripted:<file>").
	OpenProvider func(spec string) (model.Provider, error)
	// Configure resolves a session's configuration from its workspace, for every turn.
	Configure Configure
	// Feed is the process's live feed, where a turn waits for an answer.
	Feed *live.Feed
	// Instructions reads the AGENTS.md files a turn in dir is assembled with.
	Instructions func(dir string) (*prompt.InstructionFile, []prompt.InstructionFile, error)
	// Projections is the process's projection runner, administered by `zuno projections`.
	Projections ProjectionAdmin
	// Drift replays the log, up to where the read models are, into a scratch read model and
	// compares the two (docs/storage.md, "`zuno verify`").
	Drift func(ctx context.Context) ([]projections.Drift, error)
	// Anchors reads and writes `zuno verify --anchor` files.
	Anchors Anchors
	// VerifyRuns counts verification runs; nil counts nothing.
	VerifyRuns *verify.Metrics
	// Jobs handles the job ledger's commands (commands.Handlers): the task tool's calls go
	// straight to it, as the work tools' do.
	Jobs interface {
		HandleJob(ctx context.Context, c *commands.JobCommand) (commands.Result, *job.Ledger)
		// HandleQuestion handles the question commands, which share the inbox stream.
		HandleQuestion(ctx context.Context, c *commands.QuestionCommand) (commands.Result, *question.Book)
	}
	// Work reads the authoritative work state of a session's root (the plan a job's work
	// context is captured from).
	Work func(ctx context.Context, sessionID string) (*work.State, error)
}

// Application is the commands and the queries.
type Application struct {
	Commands *Commands
	Queries  *queries.Queries
}

// New wires an application. s are the process's settings (its default model); said are the
// configuration notes the process has told the user already.
func New(s Settings, said []string, p Ports, q *queries.Queries) *Application {
	return &Application{Commands: &Commands{settings: s, said: said, ports: p, queries: q}, Queries: q}
}

// Commands change state. Each takes the caller's command id in Meta: sending it again
// returns the first result and writes nothing.
type Commands struct {
	settings Settings
	said     []string
	ports    Ports
	queries  *queries.Queries
	// jobRuntime is the process's job runtime, made at first use (jobs()).
	jobsOnce   sync.Once
	jobRuntime *Jobs
	jobsMade   atomic.Bool // set once jobRuntime exists: StopJobs leaves an unused runtime alone
	// questionPort is the process's QuestionPort, made at first use (Questions()).
	questionsOnce sync.Once
	questionPort  *Questions
}

// send delivers a command. Its result's LastPosition is what a query that must see the
// command's events waits for (Queries.WaitFor); the command itself does not wait, nor touch
// the read models (read-your-writes by position, docs/storage.md).
func (c *Commands) send(ctx context.Context, cmd any) (commands.Result, error) {
	res, err := c.ports.Send(ctx, cmd)
	if err != nil {
		return res, err
	}
	return res, res.Err()
}
