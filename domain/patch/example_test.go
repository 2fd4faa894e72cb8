package patch_test

import (
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/domain/patch"
)

// The apply_patch tool's core: parse, load the state of p.Paths() under the mutation lock,
// plan, and write only when Plan returns no error.
func Example() {
	p, err := patch.Parse(`*** Begin Patch
*** Update File: greet.go
@@ func greet() {
-	println("hello")
+	println("hello, world")
*** End Patch`)
	if err != nil {
		fmt.Println(err)
		return
	}
	content := []byte("func greet() {\r\n\tprintln(\"hello\")\r\n}")
	snap := patch.Snapshot{"greet.go": {
		Kind: patch.File, Content: content, Generation: 4,
		Read: &patch.ReadCredential{Digest: patch.DigestOf(content), Generation: 4},
	}}
	plan, err := patch.Plan(p, snap)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", plan.Writes[0].Content)
	fmt.Println("writtenPaths:", plan.WrittenPaths)

	// The same patch against a file that changed after the model read it.
	st := snap["greet.go"]
	st.Content = []byte("func greet() {\n\tprintln(\"hi\")\n}\n")
	st.Generation = 5
	snap["greet.go"] = st
	_, err = patch.Plan(p, snap)
	var c *patch.Conflict
	if errors.As(err, &c) {
		fmt.Println(c.Code(), c.Path, "-", c.RequiredAction)
	}
	// Output:
	// "func greet() {\r\n\tprintln(\"hello, world\")\r\n}"
	// writtenPaths: [greet.go]
	// stale_read greet.go - read greet.go again and rebuild the operation from its current content
}
