package app

import (
	"context"
	"errors"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/events"
)

// The wake coordinator (seeds 002 §7.1, docs/delegation.md "Delivery"): after a nextStep
// report (or a peer message) is admitted, the session is driven with it as its next input. At
// most one wake per (session, input) is in flight in this process (another is
// AlreadyInFlight); a wake that finds the session's turn running here leaves the input to that
// turn's next tool-safe boundary (Take), or to its end when none is left (afterTurn); one that
// fails is tried again, 3 attempts from 10 ms doubling, capped at 100 ms, and then left in the
// inbox, where the session's next run delivers it, unless what it failed on was a turn of the
// session running here: that turn's end delivers it (afterTurn, passEnded).

// CodeAlreadyInFlight: a wake of the same (session, input) is in flight in this process.
const CodeAlreadyInFlight = "already_in_flight"

// wakeAttempts and wakeFirst bound a wake's retries; wakeCap caps one wait.
const (
	wakeAttempts = 3
	wakeFirst    = 10 * time.Millisecond
	wakeCap      = 100 * time.Millisecond
)

// wake delivers the session's pending inputs. One deliverer per session runs at a time in
// this process: a wake that finds one running marks it to look again when it is done (so an
// input admitted meanwhile is not missed), and one that finds the session's own turn running
// here marks it missed, for that turn's next boundary or its end.
func (j *Jobs) wake(parent string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopped {
		return // the run is stopping: the parent's next run delivers it
	}
	if _, busy := j.delivering[parent]; busy {
		j.delivering[parent] = true
		return
	}
	if _, running := j.comps[parent]; running {
		j.missed[parent] = true
		return
	}
	j.delivering[parent] = false
	j.work++
	go j.deliverer(parent)
}

// deliverer delivers until the inbox holds nothing it has not seen, then stops.
func (j *Jobs) deliverer(parent string) {
	defer j.end()
	for {
		err := j.Deliver(j.background, parent) // stopped with the run, as its children are
		if !j.passEnded(parent, err) {
			return
		}
	}
}

// passEnded decides, once a deliverer's pass over parent's inbox ended with err, whether it
// looks again; when it does not, it stops being the parent's deliverer.
func (j *Jobs) passEnded(parent string, err error) (again bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	// Asked to look again (an input admitted meanwhile, or a turn of the parent ended here,
	// which may be what this pass failed on: afterTurn): it looks again, failed or not.
	if j.delivering[parent] && !j.stopped {
		j.delivering[parent] = false
		return true
	}
	delete(j.delivering, parent)
	delete(j.missed, parent) // its own turns' ends need no wake: it looked again
	if _, running := j.comps[parent]; err != nil && running {
		// It failed because a turn of the parent runs here (it started meanwhile): that
		// turn's next boundary, or its end, delivers instead.
		j.missed[parent] = true
	}
	return false
}

// afterTurn wakes the session when a report arrived while its turn ran. A deliverer of the
// session in flight is asked to look again instead, whatever missed says: it may have found
// this turn running and be failing on it (session busy) after the turn's end, when nothing
// would deliver its input before the session's next run. Both sides decide under j.mu, so
// either the deliverer saw the turn running and marked it missed, which this reads, or this
// marks the deliverer, which then looks again.
func (j *Jobs) afterTurn(session string) {
	j.mu.Lock()
	missed := j.missed[session]
	delete(j.missed, session)
	_, delivering := j.delivering[session]
	if delivering {
		j.delivering[session] = true
	}
	j.mu.Unlock()
	if missed && !delivering {
		j.wake(session)
	}
}

// Deliver drives the session once for each input of its inbox not consumed yet (jobs'
// reports in the order they were admitted, then peer messages). It is also how a parent's
// next run recovers inputs a crash left in the inbox (seeds 002 §7.3): the delivery's command
// id derives from the input, so an input already delivered is answered as a duplicate, never
// delivered twice.
func (j *Jobs) Deliver(ctx context.Context, session string) error {
	for {
		l, _, err := commands.LoadJobs(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, session)
		if err != nil {
			return err
		}
		next := nextInput(l)
		if next == nil {
			return nil
		}
		if err := j.deliverOnce(ctx, session, next); err != nil {
			return err
		}
	}
}

// input is one input of a session's inbox, ready to be delivered.
type input struct {
	id, causation, prompt string
	report                turn.Report
	// consumed is the ledger command that records the input consumed by message id.
	consumed func(messageID string) any
}

func nextInput(l *job.Ledger) *input {
	if in := pendingInputs(l); len(in) > 0 {
		return in[0]
	}
	return nil
}

// pendingInputs are the inbox's inputs not consumed yet: jobs' reports in the order they
// were admitted, then peer messages.
func pendingInputs(l *job.Ledger) []*input {
	var out []*input
	for _, jb := range l.Jobs() {
		if jb.ReportInputID != "" && !jb.ReportConsumed && jb.Result != nil {
			out = append(out, &input{id: jb.ReportInputID, causation: jb.JobID, prompt: job.RenderReport(*jb.Result),
				report:   turn.Report{InputID: jb.ReportInputID, Report: *jb.Result},
				consumed: func(m string) any { return job.Consume{JobID: jb.JobID, InputID: jb.ReportInputID, MessageID: m} }})
		}
	}
	for _, m := range l.Messages() {
		if m.Consumed {
			continue
		}
		in := &input{id: m.InputID, causation: m.ToolCallID, prompt: job.RenderPeer(m.InboxMessageAdmitted),
			report:   turn.Report{InputID: m.InputID, Peer: &m.PeerMessage},
			consumed: func(msg string) any { return job.ConsumeMessage{InputID: m.InputID, MessageID: msg} }}
		if m.Steer || m.QuestionRequestID != "" { // the user's own words (a steer, or an answer to a question)
			in.causation, in.prompt, in.report = m.InputID, m.Text, turn.Report{InputID: m.InputID, Steer: true}
		}
		out = append(out, in)
	}
	return out
}

// deliverOnce claims the (session, input) wake, runs the turn that delivers the input and
// records it consumed.
func (j *Jobs) deliverOnce(ctx context.Context, session string, in *input) error {
	key := session + "/" + in.id
	j.mu.Lock()
	if j.wakes[key] {
		j.mu.Unlock()
		return domain.NewError(CodeAlreadyInFlight, "the input "+in.id+" is being delivered already", "nothing to do: it arrives once")
	}
	j.wakes[key] = true
	comp := j.last[session]
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		delete(j.wakes, key)
		j.mu.Unlock()
	}()
	id := "deliver/" + in.id
	run := RunTurn{Meta: commands.Meta{CommandID: id, Actor: "host", CorrelationID: session, CausationID: in.causation},
		SessionID: session, Prompt: in.prompt, Model: comp.model, Cwd: comp.dir, Interactive: comp.interactive,
		Observer: comp.observer, Report: &in.report}
	var err error
	wait := wakeFirst
	for attempt := 1; attempt <= wakeAttempts; attempt++ {
		if _, err = j.c.RunTurn(ctx, run); err == nil || !retryable(err) {
			break
		}
		time.Sleep(wait)
		wait = min(2*wait, wakeCap)
	}
	if err != nil {
		return err
	}
	res, _ := j.c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jobMeta("inbox-consume/"+in.id, session, in.causation),
		ParentSessionID: session, Cmd: in.consumed(turn.MessageID(id))})
	return res.Err()
}

// retryable: the parent was busy (its turn held by a live process) or the store contended.
func retryable(err error) bool {
	switch domain.CodeOf(err) {
	case turn.CodeSessionBusy, turn.CodeTurnInProgress, "contention":
		return true
	}
	var busy *events.WrongExpectedRevisionError
	return errors.As(err, &busy)
}

// Take claims, for a turn of session running here, the inbox inputs that arrived while it
// ran (turn.Inputs): only when a wake found the turn running (missed), so a step of a turn
// with nothing waiting reads nothing. A claimed input is not delivered by a deliverer at the
// same time.
func (j *Jobs) Take(ctx context.Context, session string) []turn.Input {
	j.mu.Lock()
	missed := j.missed[session]
	delete(j.missed, session)
	j.mu.Unlock()
	if !missed {
		return nil
	}
	l, _, err := commands.LoadJobs(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, session)
	if err != nil {
		j.mark(session) // delivered after the turn instead
		return nil
	}
	var out []turn.Input
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, in := range pendingInputs(l) {
		if key := session + "/" + in.id; !j.wakes[key] {
			j.wakes[key] = true
			j.taken[key] = in
			out = append(out, turn.Input{Report: in.report, Text: in.prompt})
		}
	}
	return out
}

// Recorded records the taken inputs consumed once their messages are durable, or lets them
// go to be delivered after the turn (turn.Inputs).
func (j *Jobs) Recorded(ctx context.Context, session string, in []turn.Input, err error) {
	for _, i := range in {
		key := session + "/" + i.InputID
		j.mu.Lock()
		taken := j.taken[key]
		delete(j.taken, key)
		j.mu.Unlock()
		if err == nil && taken != nil {
			// The session stream holds the message: a failure here leaves a report the ledger
			// counts as waiting, which the next delivery finds recorded (docs/delegation.md).
			_, _ = j.c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jobMeta("inbox-consume/"+i.InputID, session, taken.causation),
				ParentSessionID: session, Cmd: taken.consumed(i.MessageID)})
		}
		j.mu.Lock()
		delete(j.wakes, key)
		j.mu.Unlock()
	}
	if err != nil {
		j.mark(session)
	}
}

// mark asks for a wake of session when its running turn ends.
func (j *Jobs) mark(session string) {
	j.mu.Lock()
	j.missed[session] = true
	j.mu.Unlock()
}
