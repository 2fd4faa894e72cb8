package delegate_test

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// BenchmarkValidateArgs validates a representative task call (the full contract of seeds 002
// §4, whose legacy-argument scan runs before the schema) and a job_reconcile call, as the
// turn driver does (Tool.Validate).
func BenchmarkValidateArgs(b *testing.B) {
	all := byName(nil)
	for _, c := range []struct{ tool, args string }{
		{tools.NameTask, contractArgs(`"scope":{"include":["crates/engine","crates/cli"],"exclude":["credential stores"]},` +
			`"constraints":{"must":["keep uncommitted changes"],"must_not":["edit files","start services"]},` +
			`"dependencies":["index is current"],"background":true,"reportDelivery":"nextStep"`)},
		{tools.NameJobReconcile, `{"jobID":"job_1","outcome":"completed","finalText":"done","authority":"CI run 123","evidence":"status=success"}`},
	} {
		tl := all[c.tool]
		args := json.RawMessage(c.args)
		b.Run(c.tool, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tl.Validate(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
