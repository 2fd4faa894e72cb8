package projections

import (
	"math/rand/v2"
	"testing"
	"time"
)

// formatTime must spell every time as time.Format(TimeFormat) does: the read models written
// before it, and a live read model against a rebuilt one, compare these strings.
func TestFormatTimeIsTimeFormat(t *testing.T) {
	east := time.FixedZone("east", 5*3600+30*60)
	west := time.FixedZone("west", -8*3600)
	times := []time.Time{
		{},
		time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2027, 1, 1, 4, 0, 0, 1, east), // the day before in UTC
		time.Date(1999, 12, 31, 20, 30, 0, 120000000, west),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // TimeFormat's own spelling
		time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Now(),
	}
	rng := rand.New(rand.NewPCG(13, 2))
	for range 10000 {
		times = append(times, time.Unix(rng.Int64N(400*365*86400)-100*365*86400, rng.Int64N(1e9)).In(east))
	}
	for _, tm := range times {
		if got, want := formatTime(tm), tm.UTC().Format(TimeFormat); got != want {
			t.Fatalf("formatTime(%v) = %q, time.Format = %q", tm, got, want)
		}
	}
}

func BenchmarkFormatTime(b *testing.B) {
	tm := time.Date(2026, 11, 30, 8, 0, 0, 123456789, time.UTC)
	b.Run("formatTime", func(b *testing.B) {
		for range b.N {
			_ = formatTime(tm)
		}
	})
	b.Run("time.Format-baseline", func(b *testing.B) {
		for range b.N {
			_ = tm.UTC().Format(TimeFormat)
		}
	})
}
