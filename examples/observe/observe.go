// Package observe is a job to watch with run --http: a finite stream of
// numbers with late ones among them, a file with malformed lines, and a
// stream of ticks that never ends. Its tests scrape /metrics and load the
// status page in a browser, and check what they show against what the
// functions below make.
package observe

import (
	"fmt"
	"time"
)

// The pipeline of pipeline.yaml, as //pipegen: directives (its twin in Go:
// see docs/annotations.md).
//
//pipegen:pipeline observe parallelism=2 checkpoint.interval=500ms
//pipegen:source readings connector=file path=readings.jsonl format=jsonl type=Reading on-error=skip
//pipegen:sink out input=sums connector=file path=out format=jsonl
//pipegen:sink counts input=per-second connector=file path=counts format=jsonl
//pipegen:sink good input=readings connector=file path=good format=jsonl
//pipegen:sink paired input=pairs connector=file path=pairs
//pipegen:sink tick-out input=ticks connector=file path=ticks

// Numbers is how many numbers Next makes.
const Numbers = 20000

// Num is a number with an event time.
type Num struct {
	N  int64     `json:"n"`
	At time.Time `json:"at"`
}

// epoch is the event time of number 0.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Next makes the numbers 0..Numbers-1, one every millisecond of event
// time; from 100 on, every hundredth (50, 150, ...) is an hour late.
//
//pipegen:source nums connector=generator parallelism=1 timestamps.extract=NumTime
func Next(seq uint64) (Num, bool) {
	if seq >= Numbers {
		return Num{}, false
	}
	at := epoch.Add(time.Duration(seq) * time.Millisecond)
	if Late(seq) {
		at = at.Add(-time.Hour)
	}
	return Num{N: int64(seq), At: at}, true
}

// Late reports whether number seq comes an hour late.
func Late(seq uint64) bool { return seq >= 100 && seq%100 == 50 }

// NumTime is a number's event time.
func NumTime(n Num) time.Time { return n.At }

// Even keeps the even numbers.
//
//pipegen:filter evens input=nums
func Even(n Num) bool { return n.N%2 == 0 }

// ByDigit keys a number by its last digit.
func ByDigit(n Num) int64 { return n.N % 10 }

// Add sums numbers.
//
//pipegen:reduce sums input=evens key=ByDigit
func Add(acc, n Num) Num { acc.N += n.N; return acc }

// Tally counts the numbers of a window.
type Tally struct{ N int64 }

// Count counts one more number.
//
//pipegen:aggregate per-second input=nums key=ByDigit window.tumbling=1s result=Result
func Count(t *Tally, _ Num) { t.N++ }

// Result is a window's count.
func Result(digit int64, t *Tally) string { return fmt.Sprintf("%d: %d", digit, t.N) }

// Marks is how many marks Mark makes.
const Marks = 1000

// A Mark is a point in event time, paired with the numbers near it.
type Mark struct {
	Seq uint64
	At  time.Time
}

// NextMark makes the marks 0..Marks-1, one every 20 milliseconds of event
// time; from 100 on, every hundredth (150, 250, ...) is an hour late.
//
//pipegen:source marks connector=generator parallelism=1 timestamps.extract=MarkTime
func NextMark(seq uint64) (Mark, bool) {
	if seq >= Marks {
		return Mark{}, false
	}
	at := epoch.Add(time.Duration(seq) * 20 * time.Millisecond)
	if Late(seq) {
		at = at.Add(-time.Hour)
	}
	return Mark{Seq: seq, At: at}, true
}

// MarkTime is a mark's event time.
func MarkTime(m Mark) time.Time { return m.At }

// MarkDigit keys a mark by the last digit of its sequence number.
func MarkDigit(m Mark) int64 { return int64(m.Seq % 10) }

// Pair joins a number with a mark of the same digit within 10ms of it.
//
//pipegen:join pairs inputs=nums,marks key=ByDigit,MarkDigit between=-10ms,10ms
func Pair(n Num, m Mark) string { return fmt.Sprintf("%d ~ %d", n.N, m.Seq) }

// Reading is a line of readings.jsonl.
type Reading struct {
	Sensor string  `json:"sensor"`
	Value  float64 `json:"value"`
}

// Tick makes ticks for ever.
//
//pipegen:source ticks connector=generator parallelism=1 rate=50
func Tick(seq uint64) (string, bool) { return fmt.Sprintf("tick %d", seq), true }
