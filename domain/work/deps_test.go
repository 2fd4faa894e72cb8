package work_test

import (
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/work"
)

// An item's dependencies are bounded: a model cannot hand the decision a list longer than the
// items a session can hold. The refusal names the field and writes nothing.
func TestTodoDependenciesBounded(t *testing.T) {
	deps := func(n int) *[]string {
		d := make([]string, n)
		for i := range d {
			d[i] = fmt.Sprintf("d%d", i)
		}
		return &d
	}
	_, err := work.Decide(&work.State{}, work.TodoUpdate{SessionID: "ses_1",
		Items: []work.TodoInput{{Title: str("x"), Dependencies: deps(work.MaxDependencies + 1)}}})
	var de *domain.Error
	if !domain.HasCode(err, domain.CodeInvalidArgument) || !asDomain(err, &de) || de.Field != "items[0].dependencies" {
		t.Fatalf("over the bound: %v", err)
	}
	// At the bound the list is read (here: its ids name no item), not refused for its length.
	_, err = work.Decide(&work.State{}, work.TodoUpdate{SessionID: "ses_1",
		Items: []work.TodoInput{{Title: str("x"), Dependencies: deps(work.MaxDependencies)}}})
	if !domain.HasCode(err, domain.CodeDependencyNotFound) {
		t.Fatalf("at the bound: %v", err)
	}
}

func asDomain(err error, target **domain.Error) bool {
	e, ok := err.(*domain.Error)
	*target = e
	return ok
}
