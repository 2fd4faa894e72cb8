package schema

import (
	"encoding/json"
	"sync"
	"testing"
)

// Review attack on the lazily compiled validator (MustCompile, sync.OnceValue): the first
// uses come at once, from many goroutines and from CompileDeferred, and each gets the same
// verdict as an eagerly compiled schema (run with -race).
func TestLazyValidatorFirstUseConcurrent(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":1},"p":{"type":"string","pattern":"^a+$"}},"required":["n"],"additionalProperties":false}`)
	lazy := MustCompile("lazy_concurrent", raw, Rules{})
	eager, err := Compile("lazy_concurrent", raw, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{`{"n":1}`, `{"n":0}`, `{"n":2,"p":"aa"}`, `{"n":2,"p":"b"}`, `{}`, `{"n":1,"x":1}`, `{"n":1.0}`}
	var wg sync.WaitGroup
	errs := make(chan string, 64*len(inputs))
	wg.Add(1)
	go func() { defer wg.Done(); _ = CompileDeferred() }()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, in := range inputs {
				_, lerr := lazy.Validate(json.RawMessage(in))
				_, eerr := eager.Validate(json.RawMessage(in))
				if (lerr == nil) != (eerr == nil) || (lerr != nil && lerr.Error() != eerr.Error()) {
					errs <- in + ": lazy " + errString(lerr) + ", eager " + errString(eerr)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
