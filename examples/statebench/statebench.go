// Package statebench is the state benchmark's job: a keyed aggregate over
// generated events whose state has a given number of keys, 1% of which
// keep changing after they are all filled. See pipeline.yaml, and
// statebench_test.go, which runs it on both state backends.
package statebench

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//pipegen:pipeline statebench parallelism=2
//pipegen:sink out input=none connector=file path=out format=jsonl

// Keys and Updates are the number of keys and of events after the fill,
// from the environment (STATEBENCH_KEYS, STATEBENCH_UPDATES).
var (
	Keys    = env("STATEBENCH_KEYS", 10_000)
	Updates = env("STATEBENCH_UPDATES", 100_000)
)

func env(name string, def uint64) uint64 {
	if n, err := strconv.ParseUint(os.Getenv(name), 10, 64); err == nil {
		return n
	}
	return def
}

// Event is one event of a key.
type Event struct {
	Key   uint64
	Value int64
}

// Acc is the state of a key: about 80 bytes once encoded.
type Acc struct {
	Count, Sum, Min, Max int64
	Label                string
}

// Line is what the aggregate emits.
type Line struct {
	Key   uint64
	Count int64
}

// Generate makes event seq: seq < Keys fills key seq, the next Updates
// events go to the hot keys, the first 1% of the keys.
//
//pipegen:source events connector=generator
func Generate(seq uint64) (Event, bool) {
	if seq == Keys || seq == Keys+1 {
		// Each of the two source subtasks says when it is past the fill.
		fmt.Fprintf(os.Stderr, "statebench: fill done at %d\n", time.Now().UnixNano())
	}
	switch {
	case seq < Keys:
		return Event{Key: seq, Value: int64(seq)}, true
	case seq < Keys+Updates:
		hot := max(Keys/100, 1)
		return Event{Key: mix(seq) % hot, Value: int64(seq)}, true
	}
	return Event{}, false
}

// mix scrambles seq (the splitmix64 finaliser).
func mix(seq uint64) uint64 {
	z := seq + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// ByKey keys an event.
func ByKey(e Event) uint64 { return e.Key }

// Add adds an event to its key's state.
//
//pipegen:aggregate state input=events key=ByKey result=Summary emit=update
func Add(acc *Acc, e Event) {
	if acc.Count == 0 {
		acc.Min, acc.Max = e.Value, e.Value
		acc.Label = "a label of about forty bytes, per key...."
	}
	acc.Count++
	acc.Sum += e.Value
	acc.Min = min(acc.Min, e.Value)
	acc.Max = max(acc.Max, e.Value)
}

// Summary is what the aggregate emits for a key.
func Summary(key uint64, acc *Acc) Line { return Line{Key: key, Count: acc.Count} }

// Never drops every line: the job's cost is its state, not its output.
//
//pipegen:filter none input=state
func Never(Line) bool { return false }
