package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/events"
)

// Drift kinds: a row the live read model holds that replaying the log does not produce, and a
// row replaying produces that the live read model lacks.
const (
	DriftExtra   = "extra"
	DriftMissing = "missing"
)

// Drift is one row on which a read model and a replay of the log disagree.
type Drift struct {
	Table string `json:"table"`
	Kind  string `json:"kind"`
	// Row is the row, each value as text (JSON values re-encoded, so that SQLite's TEXT and
	// Postgres's JSONB spelling of one value compare equal).
	Row map[string]string `json:"row"`
}

// maxDrift bounds the rows reported per table: the first says where to look.
const maxDrift = 5

// CompareReadModels compares every table of projectors in live with the same table in
// replayed, a read model rebuilt from the log up to position head into a scratch database,
// and returns the rows on which they disagree (docs/storage.md, "Read-model drift"). The two
// may be of different dialects: values are compared as normalised text. A live row whose
// position (the log position of the event that created it, in every table that has one) is
// after head was created by an event the replay did not read: the log goes on growing while
// it is verified (the event view shows an append at once), so such a row is not compared.
func CompareReadModels(ctx context.Context, live, replayed *sqlx.DB, projectors []Projector, head uint64) ([]Drift, error) {
	var out []Drift
	for _, p := range projectors {
		for _, table := range p.Tables() {
			have, err := tableRows(ctx, live, table, head)
			if err != nil {
				return nil, fmt.Errorf("read %s of the read models: %w", table, err)
			}
			want, err := tableRows(ctx, replayed, table, head)
			if err != nil {
				return nil, fmt.Errorf("read %s of the replayed read models: %w", table, err)
			}
			out = append(out, diffRows(table, have, want)...)
		}
	}
	return out, nil
}

// diffRows returns the rows of have not in want (extra) and of want not in have (missing),
// as multisets, in a stable order.
func diffRows(table string, have, want map[string]map[string]string) []Drift {
	var out []Drift
	for _, side := range []struct {
		kind     string
		from, in map[string]map[string]string
	}{{DriftExtra, have, want}, {DriftMissing, want, have}} {
		var keys []string
		for k := range side.from {
			if _, ok := side.in[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys[:min(len(keys), maxDrift)] {
			out = append(out, Drift{Table: table, Kind: side.kind, Row: side.from[k]})
		}
	}
	return out
}

// tableRows reads a table as a set of normalised rows keyed by their encoding, leaving out
// rows created after head; a row that occurs n times is keyed with its occurrence, so
// duplicates count.
func tableRows(ctx context.Context, db *sqlx.DB, table string, head uint64) (map[string]map[string]string, error) {
	rows, err := db.QueryxContext(ctx, `SELECT * FROM `+table) // table names come from the projectors
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		vals := map[string]any{}
		if err := rows.MapScan(vals); err != nil {
			return nil, err
		}
		row := make(map[string]string, len(vals))
		for col, v := range vals {
			row[col] = normalise(v)
		}
		if after(row, head) {
			continue
		}
		key, _ := json.Marshal(row) // map keys are sorted
		k := string(key)
		for n := 1; ; n++ {
			if _, dup := out[k]; !dup {
				break
			}
			k = string(key) + "#" + strconv.Itoa(n)
		}
		out[k] = row
	}
	return out, rows.Err()
}

// normalise spells a value the same whichever dialect returned it.
func normalise(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return normaliseText(string(x))
	case string:
		return normaliseText(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	default:
		return fmt.Sprint(x)
	}
}

// normaliseText re-encodes JSON objects and arrays (keys sorted, no spaces); other text stays.
func normaliseText(s string) string {
	if len(s) == 0 || (s[0] != '{' && s[0] != '[') {
		return s
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}

// UpTo is feed cut at a position: what the live read models had applied when a comparison
// began, so that events appended meanwhile are not counted as drift.
func UpTo(feed Feed, position uint64) Feed { return boundedFeed{feed, position} }

type boundedFeed struct {
	Feed
	upTo uint64
}

func (f boundedFeed) ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
	if after >= f.upTo {
		return nil, nil
	}
	batch, err := f.Feed.ReadAll(ctx, after, limit)
	for i, r := range batch {
		if r.Position > f.upTo {
			return batch[:i], err
		}
	}
	return batch, err
}

// after reports whether row was created by an event after head (its position column).
func after(row map[string]string, head uint64) bool {
	p, ok := row["position"]
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(p, 10, 64)
	return err == nil && n > head
}
