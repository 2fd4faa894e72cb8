package projections_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/projections"
)

// Rows held and written many per statement give the read models that one event per
// transaction gives (where few rows share a statement): the rebuild's batches of 1,000
// events put each plan's, item's, part's and decision's successive upserts in successive
// statements, and every other key's beside them.
func TestBatchedWritesEqualOneEventAtATime(t *testing.T) {
	for _, tc := range dialects {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			ctx := context.Background()
			n := scenario(t, e.store, 30) + turnScenario(t, e.store, 5) + permissionScenario(t, e.store, 4)
			oneByOne := projections.NewRunner(e.rm.Writer, e.store, registry, projections.All(), projections.WithBatchSize(1))
			if got, err := oneByOne.CatchUp(ctx); err != nil || got != uint64(n) {
				t.Fatalf("caught up to %d of %d: %v", got, n, err)
			}
			want := dump(t, e.rm.Writer)
			if got, err := e.runner.Rebuild(ctx); err != nil || got != n {
				t.Fatalf("rebuilt %d of %d: %v", got, n, err)
			}
			compareDumps(t, want, dump(t, e.rm.Writer))
		})
	}
}
