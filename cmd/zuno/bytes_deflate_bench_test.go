package main

import (
	"bytes"
	"compress/flate"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// BenchmarkBytesPerStepDeflatedLog measures what a compressed event log would save, the one
// change that could bring a step near issue 32's 3.5 KB (docs/storage.md, "Bytes per step":
// why the log stays plain). It records the 10- and 100-step sessions of BenchmarkBytesPerStep
// and copies each database twice with VACUUM INTO: as it is (plain), and with every event's
// data and metadata deflated (level 6) with a preset dictionary, the last 8 KiB of a third
// session's events, as a store would keep them. bytes/step is each copy's growth over the 90
// extra steps; the two copies are laid out by the same VACUUM, so their difference is the
// compression's alone.
func BenchmarkBytesPerStepDeflatedLog(b *testing.B) {
	bin := buildZuno(b)
	for range b.N {
		dict := logTail(b, recordEchoSession(b, bin, nil, 30), 8<<10)
		small, large := recordEchoSession(b, bin, nil, 10), recordEchoSession(b, bin, nil, 100)
		for _, v := range []struct {
			name string
			dict []byte
		}{{"plain", nil}, {"deflated", dict}} {
			grown := vacuumedCopy(b, large, v.dict) - vacuumedCopy(b, small, v.dict)
			b.ReportMetric(float64(grown)/90, "bytes/step:"+v.name)
		}
	}
}

// logTail returns the last n bytes of the data and metadata of the log at path, in order.
func logTail(b *testing.B, path string, n int) []byte {
	b.Helper()
	var all []byte
	eachLogValue(b, path, func(_ int64, data, meta []byte) {
		all = append(append(all, data...), meta...)
	})
	return all[max(0, len(all)-n):]
}

// eachLogValue calls f with every event's position, data and metadata, in position order.
func eachLogValue(b *testing.B, path string, f func(pos int64, data, meta []byte)) {
	b.Helper()
	db, err := sqldb.OpenSQLite(context.Background(), path, sqldb.Writer)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT position, CAST(data AS BLOB), CAST(metadata AS BLOB) FROM event_log ORDER BY position`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var pos int64
		var data, meta []byte
		if err := rows.Scan(&pos, &data, &meta); err != nil {
			b.Fatal(err)
		}
		f(pos, data, meta)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
}

// vacuumedCopy copies the database at path with VACUUM INTO, deflates its log's values with
// dict when dict is not nil, vacuums the copy again and returns its size.
func vacuumedCopy(b *testing.B, path string, dict []byte) int64 {
	b.Helper()
	ctx := context.Background()
	dst := filepath.Join(b.TempDir(), "copy.db")
	src, err := sqldb.OpenSQLite(ctx, path, sqldb.Writer)
	if err != nil {
		b.Fatal(err)
	}
	_, err = src.ExecContext(ctx, `VACUUM INTO ?`, dst)
	src.Close()
	if err != nil {
		b.Fatal(err)
	}
	if dict != nil {
		deflateLog(b, dst, dict)
	}
	st, err := os.Stat(dst)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// deflateLog rewrites every event's data and metadata of the log at path as raw deflate
// streams with the preset dictionary dict, then vacuums the file.
func deflateLog(b *testing.B, path string, dict []byte) {
	b.Helper()
	type row struct {
		pos        int64
		data, meta []byte
	}
	var all []row
	eachLogValue(b, path, func(pos int64, data, meta []byte) {
		all = append(all, row{pos, deflateWith(b, data, dict), deflateWith(b, meta, dict)})
	})
	db, err := sqldb.OpenSQLite(context.Background(), path, sqldb.Writer)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range all {
		if _, err := tx.Exec(`UPDATE event_log SET data = ?, metadata = ? WHERE position = ?`, r.data, r.meta, r.pos); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`VACUUM`); err != nil {
		b.Fatal(err)
	}
}

func deflateWith(b *testing.B, v, dict []byte) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriterDict(&buf, 6, dict)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Write(v); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
