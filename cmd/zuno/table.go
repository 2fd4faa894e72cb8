package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeTable prints rows under a header, aligned; values are printed with %v and kept on one
// line.
func writeTable(w io.Writer, columns []string, rows [][]any) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(columns, "\t"))
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				cells[i] = "NULL"
				continue
			}
			cells[i] = strings.NewReplacer("\n", `\n`, "\t", " ").Replace(fmt.Sprint(v))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// dashNulls shows a missing value as "-" in a listing for people (a root session has no
// parent); `zuno db` keeps NULL, which is what SQL returned.
func dashNulls(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, row := range rows {
		out[i] = make([]any, len(row))
		for j, v := range row {
			if v == nil {
				v = "-"
			}
			out[i][j] = v
		}
	}
	return out
}
