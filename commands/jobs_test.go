package commands_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/events"
)

func jobCmd(id, parent string, cmd any) *commands.JobCommand {
	return &commands.JobCommand{Meta: commands.Meta{CommandID: id, Actor: "host"}, ParentSessionID: parent, Cmd: cmd}
}

// A storm of settlements to one parent, each sent twice, concurrently, over a real SQLite
// store: every report is admitted once and none is lost (seeds 002 §7.1). Run with -race.
func TestReportStormAdmitsEachOnce(t *testing.T) {
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "zuno.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	registry := events.NewRegistry(events.AllPayloads()...)
	h := commands.NewHandlers(store, registry, commands.SystemClock{}, nil)
	const n = 24
	for i := range n {
		id := fmt.Sprintf("job_%02d", i)
		adm := job.Admit{JobAdmitted: events.JobAdmitted{JobState: events.JobState{JobID: id, ParentSessionID: "ses_p",
			ChildSessionID: "ses_c" + id, Agent: "explorer", Background: true, ReportDelivery: events.DeliveryNextStep, LogicalKey: "lk_" + id}}}
		for _, c := range []any{adm, job.Start{JobID: id}} {
			if res, _ := h.HandleJob(ctx, jobCmd(fmt.Sprintf("%T/%s", c, id), "ses_p", c)); res.Err() != nil {
				t.Fatal(res.Err())
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range 2 * n { // each settlement twice: a retry racing its first delivery
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("job_%02d", i%n)
			settle := job.Settle{JobID: id, Status: events.JobCompleted, Result: &events.TaskReport{JobID: id, Status: events.JobCompleted},
				InputID: "input_" + id}
			res, _ := h.HandleJob(ctx, jobCmd("job-settle/"+id, "ses_p", settle))
			if err := res.Err(); err != nil && domain.CodeOf(err) != job.CodeJobState {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs, err := store.ReadStream(ctx, commands.JobStream("ses_p"), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	admitted := map[string]int{}
	for _, rec := range recs {
		if rec.Type == events.TypeJobReportAdmitted {
			p, _ := registry.Decode(rec)
			admitted[p.(events.JobReportAdmitted).InputID]++
		}
	}
	if len(admitted) != n {
		t.Fatalf("%d reports admitted, want %d", len(admitted), n)
	}
	for input, count := range admitted {
		if count != 1 {
			t.Errorf("%s admitted %d times", input, count)
		}
	}
}
