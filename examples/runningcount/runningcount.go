// Package runningcount is pipegen's crash-test example: a keyed job whose
// output grows record by record, so that the file sink's two-phase commit
// is at work all the time, not only at the end of the input.
//
// pipeline.yaml wires these functions into a job (and so do the //pipegen:
// directives below, its twin in Go; see docs/annotations.md): a generator
// makes Events deterministic events, each for one of Keys keys; Weigh
// turns an event into an Item with its key's name and amount; an
// aggregate keyed by ByKey counts and sums every key's items and emits the
// key's running Line after every record (emit: update); a file sink writes
// the lines as JSON.
//
// The output does not depend on the order in which the records of a key
// arrive (which differs between runs, since the two source subtasks feed
// the same keys): a key's amount is the same for all of its events, so
// its lines are count c and sum c*Weight(key) for c = 1..n, n the key's
// number of events. Its crash test (crash_test.go) computes that output
// independently and checks that a run killed many times commits exactly
// it, as does a run that is never killed.
package runningcount

import "fmt"

//pipegen:pipeline runningcount parallelism=2
//pipegen:sink out input=totals connector=file path=out format=jsonl

// Events is the number of events the generator makes.
const Events = 200_000

// Keys is the number of distinct keys.
const Keys = 500

// Event is one generated event: its sequence number and the index of its
// key in [0, Keys).
type Event struct {
	Seq uint64
	Key int
}

// Item is an event ready to be counted: its key's name and its amount.
type Item struct {
	Key    string
	Amount int64
}

// Total is the state kept per key.
type Total struct {
	Count int64
	Sum   int64
}

// Line is one line of the output: a key's running count and sum.
type Line struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
	Sum   int64  `json:"sum"`
}

// Generate makes event seq; there are Events of them.
//
//pipegen:source events connector=generator
func Generate(seq uint64) (Event, bool) {
	if seq >= Events {
		return Event{}, false
	}
	return Event{Seq: seq, Key: KeyOf(seq)}, true
}

// KeyOf is the key index of event seq: seq scrambled (the splitmix64
// finaliser), so that the keys of consecutive events look random.
func KeyOf(seq uint64) int {
	z := seq + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return int(z % Keys)
}

// KeyName is the name of key index k.
func KeyName(k int) string { return fmt.Sprintf("k%03d", k) }

// Weight is the amount of every event of key index k.
func Weight(k int) int64 { return int64(k%9 + 1) }

// Weigh makes the item of an event.
//
//pipegen:map items input=events
func Weigh(e Event) Item { return Item{Key: KeyName(e.Key), Amount: Weight(e.Key)} }

// ByKey keys an item by its key's name.
func ByKey(it Item) string { return it.Key }

// Add counts one more item of a key.
//
//pipegen:aggregate totals input=items key=ByKey result=Running emit=update
func Add(acc *Total, it Item) {
	acc.Count++
	acc.Sum += it.Amount
}

// Running makes a key's output line from its running total.
func Running(key string, acc *Total) Line {
	return Line{Key: key, Count: acc.Count, Sum: acc.Sum}
}
