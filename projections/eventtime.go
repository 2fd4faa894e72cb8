package projections

import "time"

// formatTime spells t in UTC as TimeFormat does. Nearly every statement a projector writes
// carries a time, so a rebuild formats one per row: time.Format, which reads its layout anew
// on every call, was 6% of a rebuild's writer on SQLite (a profile of BenchmarkRebuildMillion),
// and this takes half its time. Years outside 0-9999, which TimeFormat spells differently, go
// to time.Format.
func formatTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(TimeFormat)
	}
	hour, minute, second := t.Clock()
	var b [len("2006-01-02T15:04:05.000000000Z")]byte
	digits(b[0:4], year)
	b[4] = '-'
	digits(b[5:7], int(month))
	b[7] = '-'
	digits(b[8:10], day)
	b[10] = 'T'
	digits(b[11:13], hour)
	b[13] = ':'
	digits(b[14:16], minute)
	b[16] = ':'
	digits(b[17:19], second)
	b[19] = '.'
	digits(b[20:29], t.Nanosecond())
	b[29] = 'Z'
	return string(b[:])
}

// digits writes v into b in decimal, zero-padded to len(b).
func digits(b []byte, v int) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
}
