// Package aligned is the pipelines of the crash tests of watermark
// alignment: readings of two files, one starting later in event time than
// the other, summed per sensor in tumbling windows. pipeline.yaml reads
// them with the two subtasks of a file source with timestamps.max-drift;
// grouped.yaml with two sources at parallelism 1 in one
// timestamps.align-group.
package aligned

import (
	"time"

	"github.com/pipegen/pipegen"
)

// Reading is a line of the input.
type Reading struct {
	Sensor string `json:"sensor"`
	At     int64  `json:"at"` // Unix milliseconds
	Value  int64  `json:"value"`
}

// ReadingTime is a reading's event time.
func ReadingTime(r Reading) int64 { return r.At }

// BySensor keys a reading by its sensor.
func BySensor(r Reading) string { return r.Sensor }

// Sum is a window's readings of a sensor.
type Sum struct {
	N     int64
	Total int64
}

// Delay is how long Add waits on every fiftieth reading, so that a run
// lasts long enough to be killed during it.
var Delay = time.Millisecond

// Add adds a reading to its window's sum.
func Add(s *Sum, r Reading) {
	if r.Value%50 == 0 && Delay > 0 {
		time.Sleep(Delay)
	}
	s.N++
	s.Total += r.Value
}

// Line is a line of the output: a sensor's window.
type Line struct {
	Sensor string `json:"sensor"`
	Start  int64  `json:"start"`
	N      int64  `json:"n"`
	Total  int64  `json:"total"`
}

// Result is a window's line.
func Result(sensor string, w pipegen.Window, s *Sum) Line {
	return Line{Sensor: sensor, Start: w.Start.UnixMilli(), N: s.N, Total: s.Total}
}
