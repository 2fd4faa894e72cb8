package main

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
)

// jsonRows writes a user query's rows as they arrive, as one JSON array of objects keyed by
// column name: the bytes writeJSON writes for the whole result (two-space indent, keys
// sorted, a repeated column name keeping its last value), with one row in memory at a time,
// each value encoded once and written (no copy of the whole row encoded, then indented).
type jsonRows struct {
	w       io.Writer
	columns []string
	keys    []string // the distinct column names, sorted
	last    []int    // for each key, the index of its last column
	n       int
}

func (j *jsonRows) Header(columns []string) error {
	j.columns = columns
	at := map[string]int{}
	for i, c := range columns {
		at[c] = i
	}
	j.keys = j.keys[:0]
	for c := range at {
		j.keys = append(j.keys, c)
	}
	slices.Sort(j.keys) // encoding/json's order for map keys
	j.last = make([]int, len(j.keys))
	for i, k := range j.keys {
		j.last[i] = at[k]
	}
	return nil
}

func (j *jsonRows) Row(values []any) error {
	w := bufio.NewWriter(j.w)
	sep := ",\n  "
	if j.n == 0 {
		sep = "[\n  "
	}
	j.n++
	w.WriteString(sep)
	if len(j.keys) == 0 {
		w.WriteString("{}")
		return w.Flush()
	}
	w.WriteString("{")
	for i, k := range j.keys {
		if i > 0 {
			w.WriteString(",")
		}
		name, _ := json.Marshal(k)
		w.WriteString("\n    ")
		w.Write(name)
		w.WriteString(": ")
		// Encoded straight into w: json.Marshal would copy a long value once more.
		if err := json.NewEncoder(noNewline{w}).Encode(values[j.last[i]]); err != nil {
			return err
		}
	}
	w.WriteString("\n  }")
	return w.Flush()
}

// noNewline drops the newline json.Encoder writes after each value, which it writes in the
// same one Write as the value.
type noNewline struct{ w io.Writer }

func (n noNewline) Write(p []byte) (int, error) {
	if len(p) > 0 && p[len(p)-1] == '\n' {
		if _, err := n.w.Write(p[:len(p)-1]); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return n.w.Write(p)
}

// close ends the array: rows printed before an error are closed into valid JSON; with no
// row printed, an empty array only when the query succeeded.
func (j *jsonRows) close(ok bool) error {
	var err error
	switch {
	case j.n > 0:
		_, err = io.WriteString(j.w, "\n]\n")
	case ok:
		_, err = io.WriteString(j.w, "[]\n")
	}
	return err
}

// rowsAsObjects turns rows into one JSON object per row, keyed by column name.
func rowsAsObjects(columns []string, rows [][]any) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, row := range rows {
		obj := make(map[string]any, len(columns))
		for j, c := range columns {
			obj[c] = row[j]
		}
		out[i] = obj
	}
	return out
}
