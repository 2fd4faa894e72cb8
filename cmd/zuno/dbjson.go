package main

import (
	"encoding/json"
	"io"
)

// jsonRows writes a user query's rows as they arrive, as one JSON array of objects keyed by
// column name: the bytes writeJSON writes for the whole result (two-space indent, keys
// sorted), with one row in memory at a time.
type jsonRows struct {
	w       io.Writer
	columns []string
	n       int
}

func (j *jsonRows) Header(columns []string) error {
	j.columns = columns
	return nil
}

func (j *jsonRows) Row(values []any) error {
	obj := make(map[string]any, len(j.columns))
	for i, c := range j.columns {
		obj[c] = values[i]
	}
	data, err := json.MarshalIndent(obj, "  ", "  ")
	if err != nil {
		return err
	}
	sep := ",\n  "
	if j.n == 0 {
		sep = "[\n  "
	}
	j.n++
	if _, err := io.WriteString(j.w, sep); err != nil {
		return err
	}
	_, err = j.w.Write(data)
	return err
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
