// Package deadletter is a golden case: a file source that sends its
// malformed records to its side output dead-letter, read by a sink of its
// own, while the well-formed ones go on.
package deadletter

import (
	"fmt"
	"time"
)

// Reading is one line of readings.jsonl.
type Reading struct {
	Sensor string    `json:"sensor"`
	TS     time.Time `json:"ts"`
	Temp   float64   `json:"temp"`
}

// ReadingTime is a reading's event time.
func ReadingTime(r Reading) time.Time { return r.TS }

// Line prints a reading.
func Line(r Reading) string { return fmt.Sprintf("%s %.1f", r.Sensor, r.Temp) }
