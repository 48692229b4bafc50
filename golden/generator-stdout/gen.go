// Package gen is the golden case of a generator source feeding a filter and
// a map into standard output, with a type that prints itself.
package gen

import "fmt"

type Reading struct {
	Sensor int
	Value  float64
}

func (r Reading) String() string { return fmt.Sprintf("sensor %d: %.1f", r.Sensor, r.Value) }

// Next makes 20 readings.
func Next(seq uint64) (Reading, bool) {
	if seq >= 20 {
		return Reading{}, false
	}
	return Reading{Sensor: int(seq % 4), Value: float64(seq) * 1.5}, true
}

func Warm(r Reading) bool { return r.Value >= 6 }

func Calibrate(r Reading) Reading {
	r.Value -= 0.5
	return r
}
