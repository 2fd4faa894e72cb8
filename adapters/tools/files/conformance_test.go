package files

import (
	"context"
	"errors"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/internal/patchconformance"
	"github.com/zuno-run/zuno/domain/patch"
)

// TestConformance runs Codex's apply_patch scenarios through Read and ApplyPatch on disk.
func TestConformance(t *testing.T) {
	patchconformance.Run(t, func(t *testing.T, root string, files []string, text string) patchconformance.Result {
		w, err := New(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			read(t, w, f)
		}
		_, err = w.ApplyPatch(context.Background(), text)
		if err == nil {
			return patchconformance.Result{}
		}
		var coded interface{ Code() string }
		if !errors.As(err, &coded) || coded.Code() == "" || coded.Code() == patch.CodeSnapshotIncomplete || coded.Code() == string(CodeUncertain) {
			t.Fatalf("untyped or unexpected error %T: %v", err, err)
		}
		t.Logf("rejected: %v", err)
		var ce *patch.ConflictError
		return patchconformance.Result{Code: coded.Code(), Conflict: errors.As(err, &ce)}
	})
}
