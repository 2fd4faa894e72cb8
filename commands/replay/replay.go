// Package replay re-drives a recorded session through today's turn driver (commands/turn) and
// compares every event the driver decides with the one the log recorded (docs/replay.md). The
// recorded model responses, tool results and permission answers are the inputs: no provider is
// called, no tool runs, and nothing is appended to the real log — the driver writes into an
// in-memory copy of the session's stream. Because the real driver, scheduler and gate make the
// decisions again, the replay cannot drift from them: it is the upgrade check a new build is
// run over stored sessions with before it is rolled out.
package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// CodeReplayMismatch is the stable code of a replay whose decisions differ from the log's.
const CodeReplayMismatch = "replay_mismatch"

// Turn is one recorded run of a turn's command, as the host needs it to build the request the
// driver is given again.
type Turn struct {
	Meta    commands.Meta
	Started events.TurnStarted
	Text    string
	// Directory is where the turn worked; Move is set when the turn's command moved the
	// session there.
	Directory, Move string
	// Report is the inbox report the turn's user message delivered (docs/delegation.md).
	Report *turn.Report
	// Child: the session is a delegated child, whose agent may be a subagent.
	Child bool
	// Interactive: someone answered the turn's asks (it recorded one). A run nobody answered
	// turns an ask into a denial, so this is how the run was invoked, not a decision.
	Interactive bool
	// Detach is called by a Build that finds Directory gone: the turn is then replayed with
	// its tools opened detached (turn.ToolsRequest.Gone is the function it returns), and a
	// step whose decisions needed the workspace is reported Unchecked, not as a difference
	// (docs/replay.md, "A workspace that is gone").
	Detach func() func(path string)
}

// Build returns the request a turn's command is driven with today (the agent, the tools, the
// gate, as configured now); done releases what it opened. Provider, Inbox and the ids are the
// replay's own.
type Build func(ctx context.Context, t Turn) (req turn.Request, done func() error, err error)

// Difference is the first disagreement of one step: the field (a JSON path in the event) and
// both values.
type Difference struct {
	TurnID   string `json:"turnId"`
	Step     int    `json:"step"`
	Event    string `json:"event"`
	Field    string `json:"field"`
	Recorded string `json:"recorded"`
	Replayed string `json:"replayed"`
}

// Report is a session's replay.
type Report struct {
	SessionID   string       `json:"sessionId"`
	Turns       int          `json:"turns"`
	Events      int          `json:"events"`
	Differences []Difference `json:"differences"`
	// Unchecked are the steps that needed a workspace that is gone.
	Unchecked []Unchecked `json:"unchecked"`
	// ConfigChanged are the configuration files not as the turns read them: the likely cause
	// of differences, never one itself.
	ConfigChanged []ConfigChange `json:"configChanged"`
	// Compactions are the transcript boundaries the session's turns moved (docs/compaction.md),
	// compared like every other decision: each is shown so a reader sees where the
	// conversation the later steps were sent starts.
	Compactions []Compaction `json:"compactions,omitempty"`
}

// Compaction is one recorded boundary move.
type Compaction struct {
	TurnID    string `json:"turnId"`
	Step      int    `json:"step"`
	Window    int    `json:"window"`
	Through   int    `json:"through"`
	RequestID string `json:"requestId"`
}

// Err is the report as an error: nil when every decision agreed.
func (r Report) Err() error {
	if len(r.Differences) == 0 {
		if len(r.Unchecked) > 0 {
			return r.goneErr()
		}
		return nil
	}
	d := r.Differences[0]
	e := domain.NewError(CodeReplayMismatch,
		fmt.Sprintf("session %s: %d step(s) decided differently; first: step %d %s %s recorded %s, replayed %s",
			r.SessionID, len(r.Differences), d.Step, d.Event, d.Field, d.Recorded, d.Replayed),
		"this build decides these steps differently from the one that ran them: review the change before rolling it out")
	e.ID = r.SessionID
	return e
}

// Session replays every turn of a session read from log.
func Session(ctx context.Context, log commands.StreamReader, registry *events.Registry, sessionID string, build Build) (Report, error) {
	rep := Report{SessionID: sessionID}
	var all []events.Recorded
	for rec, err := range commands.Events(ctx, log, commands.SessionStream(sessionID), 0) {
		if err != nil {
			return rep, err
		}
		all = append(all, rec)
	}
	if len(all) == 0 {
		e := domain.NewError(domain.CodeSessionNotFound, fmt.Sprintf("session %s has no events", sessionID),
			"check the id with zuno session list")
		e.ID = sessionID
		return rep, e
	}
	cmds, err := commandsOf(registry, all)
	if err != nil {
		return rep, err
	}
	for _, c := range cmds {
		g, err := newGroup(registry, c.recs)
		if err != nil {
			return rep, err
		}
		if g.started != nil {
			t := Turn{Meta: g.meta(), Started: *g.started, Text: g.text, Move: g.move, Interactive: g.asked, Report: g.report,
				Child: isChild(registry, all)}
			diffs, skipped, changed, err := replayTurn(ctx, log, registry, all[:c.start], g, t, build)
			if err != nil {
				return rep, err
			}
			rep.Turns++
			rep.Differences = append(rep.Differences, diffs...)
			rep.Unchecked = append(rep.Unchecked, skipped...)
			rep.ConfigChanged = append(rep.ConfigChanged, changed...)
		}
		for _, p := range g.payloads {
			if k, ok := p.(events.TranscriptCompacted); ok {
				rep.Compactions = append(rep.Compactions, Compaction{TurnID: k.TurnID, Step: k.Step, Window: k.Window, Through: k.Through, RequestID: k.RequestID})
			}
		}
		rep.Events += c.events
	}
	return rep, nil
}

// replayTurn drives one turn's command over the history before it and compares what it
// appends with the recorded group.
func replayTurn(ctx context.Context, log commands.StreamReader, registry *events.Registry, before []events.Recorded,
	g *group, t Turn, build Build) ([]Difference, []Unchecked, []ConfigChange, error) {
	cmp := &comparer{g: g}
	st := &store{log: log, stream: commands.SessionStream(t.Started.SessionID), recs: append([]events.Recorded(nil), before...),
		cutoff: g.recs[0].Position, check: cmp.check, jobStream: commands.JobStream(t.Started.SessionID), jobsRead: g.jobsReads()}
	// The workspace as the session's history says, a fork's included (its source's events).
	var sess session.State
	if _, err := commands.Load(ctx, st, registry, st.stream, 0, func(_ events.Recorded, p events.Payload) error { return sess.Evolve(p) }); err != nil {
		return nil, nil, nil, err
	}
	t.Directory = sess.Directory
	if t.Move != "" {
		t.Directory = t.Move
	}
	t.Detach = func() func(string) { return cmp.detach(t.Directory, before, registry) }
	req, done, err := build(ctx, t)
	if err != nil {
		return []Difference{g.refused(err)}, nil, nil, nil
	}
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ids := g.ids()
	d := &turn.Driver{Store: st, Registry: registry, Clock: g, Owner: t.Started.Owner,
		NewID: func() string {
			if len(ids) == 0 {
				return "replay-extra-id"
			}
			id := ids[0]
			ids = ids[1:]
			return id
		},
		Sleep: func(context.Context, time.Duration) error { return nil }, Jitter: func() float64 { return 0 }}
	req.Meta, req.SessionID, req.Text, req.Directory, req.Report = t.Meta, t.Started.SessionID, t.Text, t.Move, t.Report
	req.Inputs = &recordedInputs{byStep: g.inputs}
	req.ProviderName = t.Started.Provider
	req.Provider = newProvider(g, cancel, t.Started.Wire)
	if w := t.Started.Wire; w != nil {
		req.Retry = model.RetryPolicy{Retries: w.Retries}
	}
	req.Tools = recordedTools(narrowed(req.Tools, recordedOffer(registry, before, g), req.ToolsConfig), g, st, cancel)
	req.Inbox = inbox{log: log, registry: registry, cancel: cancel}
	_, err = d.Run(ctx, req)
	if err != nil && !errors.Is(err, errStop) && cmp.diffs == nil && cmp.skipped == nil {
		return []Difference{g.refused(err)}, nil, cmp.changed, nil
	}
	if !cmp.stopped && cmp.next < len(g.recs) {
		cmp.missing()
	}
	return cmp.diffs, cmp.skipped, cmp.changed, nil
}

// command is the events one command appended to the session's stream, from index start of
// the stream; a turn that suspended is one command with the commands that resumed it.
type command struct {
	start, events int
	recs          []events.Recorded
}

// commandsOf cuts a session's events into commands. The commands that resume a suspended
// turn (their first event session.turn.resumed.1), and those that only record a suspension,
// join the turn's command: a replay runs a turn as one, its answers already in the log, so
// the suspension and resumption records, which are not decisions, are left out of what it is
// compared with (docs/replay.md, "Suspended turns").
func commandsOf(registry *events.Registry, all []events.Recorded) ([]command, error) {
	var out []command
	for start := 0; start < len(all); {
		end := start + 1
		for end < len(all) && all[end].Metadata.CommandID == all[start].Metadata.CommandID {
			end++
		}
		span := all[start:end]
		if n := len(out); n > 0 && lifecycleOnly(span[:1]) {
			// A resumption whose process stopped and which was then recovered under its own id
			// (sent again): the turn stopped where the recovery begins, as a killed run's does,
			// and the recovery is the next command's work, not a decision of the turn.
			kept, err := beforeRecovery(registry, span)
			if err != nil {
				return nil, err
			}
			out[n-1].recs = append(out[n-1].recs, decisions(kept)...)
			out[n-1].events += len(span)
		} else {
			out = append(out, command{start: start, events: len(span), recs: decisions(span)})
		}
		start = end
	}
	return out, nil
}

// beforeRecovery is recs up to what a recovery recorded: the events that end with the turn
// finished recovered and, before it, the open request failed interrupted and the calls settled
// recovered (transcript.Recover's order).
func beforeRecovery(registry *events.Registry, recs []events.Recorded) ([]events.Recorded, error) {
	ps := make([]events.Payload, len(recs))
	end := -1
	for i, rec := range recs {
		p, err := registry.Decode(rec)
		if err != nil {
			return nil, err
		}
		ps[i] = p
		if f, ok := p.(events.TurnFinished); ok && f.Recovered && end < 0 {
			end = i
		}
	}
	if end < 0 {
		return recs, nil
	}
	for end > 0 && recoveryRecord(ps[end-1]) {
		end--
	}
	return recs[:end], nil
}

func recoveryRecord(p events.Payload) bool {
	switch e := p.(type) {
	case events.ToolSettled:
		return e.Recovered
	case events.ProviderRequest:
		return e.Status == events.RequestFailed && e.Error != nil && e.Error.Code == transcript.CodeInterrupted
	}
	return false
}

// lifecycleOnly reports whether recs open with a turn's suspension or resumption.
func lifecycleOnly(recs []events.Recorded) bool {
	t := recs[0].Type
	return t == events.TypeTurnResumed || t == events.TypeTurnSuspended
}

// decisions is recs without the suspension and resumption records.
func decisions(recs []events.Recorded) []events.Recorded {
	out := make([]events.Recorded, 0, len(recs))
	for _, r := range recs {
		if r.Type != events.TypeTurnResumed && r.Type != events.TypeTurnSuspended {
			out = append(out, r)
		}
	}
	return out
}

// isChild reports whether the session's first event creates it under a parent.
func isChild(registry *events.Registry, recs []events.Recorded) bool {
	if len(recs) == 0 || recs[0].Type != events.TypeSessionCreated {
		return false
	}
	p, err := registry.Decode(recs[0])
	return err == nil && p.(events.SessionCreated).ParentSessionID != ""
}
