package main

import (
	"bytes"
	"testing"
)

// Rows streamed one at a time print the bytes the whole result printed at once did
// (zuno db --format json keeps its format while it streams).
func TestJSONRowsPrintWhatWriteJSONPrinted(t *testing.T) {
	cols := []string{"b", "a", "html", "a"}
	for _, rows := range [][][]any{
		{},
		{{"x", int64(1), "<&>", "second a"}},
		{{"x", int64(1), nil, true}, {"line\nbreak", 2.5, `{"k": "v"}`, "\u2028\x01\xff"}, {"", int64(-3), "é", nil}},
	} {
		var want, got bytes.Buffer
		if err := writeJSON(&want, rowsAsObjects(cols, rows)); err != nil {
			t.Fatal(err)
		}
		j := &jsonRows{w: &got}
		_ = j.Header(cols)
		for _, r := range rows {
			if err := j.Row(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.close(true); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("streamed\n%s\nwhole\n%s", got.String(), want.String())
		}
	}
	// A query without columns (none reach zuno db, but the printer does not care).
	var want, got bytes.Buffer
	writeJSON(&want, rowsAsObjects(nil, [][]any{{}}))
	j := &jsonRows{w: &got}
	_ = j.Header(nil)
	_ = j.Row(nil)
	_ = j.close(true)
	if got.String() != want.String() {
		t.Fatalf("no columns: streamed %q, whole %q", got.String(), want.String())
	}
}
