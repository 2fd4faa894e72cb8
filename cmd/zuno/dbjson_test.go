package main

import (
	"bytes"
	"testing"
)

// Rows streamed one at a time print the bytes the whole result printed at once did
// (zuno db --format json keeps its format while it streams).
func TestJSONRowsPrintWhatWriteJSONPrinted(t *testing.T) {
	cols := []string{"b", "a", "html"}
	for _, rows := range [][][]any{
		{},
		{{"x", int64(1), "<&>"}},
		{{"x", int64(1), nil}, {"line\nbreak", 2.5, `{"k": "v"}`}, {"", int64(-3), "é"}},
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
}
