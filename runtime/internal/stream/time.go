package stream

import "math"

// Event time is int64 milliseconds since the Unix epoch. It travels with
// every record of a node with timestamps (Timed), and as watermarks in band
// between the records.

// The bounds of event time. MaxTime is the watermark at the end of a bounded
// input: every window fires and every event-time timer runs. A record's
// timestamp should be below MaxTime; one at MaxTime is placed in windows as
// if it were MaxTime-1.
const (
	MinTime int64 = math.MinInt64
	MaxTime int64 = math.MaxInt64
)

// Timed is a record with its event time.
type Timed[T any] struct {
	TS int64
	V  T
}
