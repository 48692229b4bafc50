// Package kafkacount is pipegen's Kafka example: a running count and sum
// per key, from the topic events to the topic totals, exactly once (see
// pipeline.yaml, its twin in directives below, and README.md).
package kafkacount

import "fmt"

//pipegen:pipeline kafkacount parallelism=2 checkpoint.interval=1s
//pipegen:source events pipeline=kafkacount connector=kafka brokers=localhost:9092 topic=events format=jsonl type=Event
//pipegen:sink out pipeline=kafkacount input=totals connector=kafka brokers=localhost:9092 topic=totals key=ResultKey

// Event is one message of the topic events.
type Event struct {
	Key    string `json:"key"`
	Amount int64  `json:"amount"`
}

// Total is the state per key.
type Total struct {
	Count int64
	Sum   int64
}

// Result is one message of the topic totals: a key's count and sum after
// one more event.
type Result struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
	Sum   int64  `json:"sum"`
}

// ByKey keys an event by its key.
func ByKey(e Event) string { return e.Key }

// Add counts one more event into its key's total.
//
//pipegen:aggregate totals pipeline=kafkacount input=events key=ByKey result=Running emit=update
func Add(t *Total, e Event) {
	t.Count++
	t.Sum += e.Amount
}

// Running is the key's result after the event just added.
func Running(key string, t *Total) Result { return Result{Key: key, Count: t.Count, Sum: t.Sum} }

// ResultKey is the message key of a result: its key, so that a key's
// results stay in one partition, in order.
func ResultKey(r Result) string { return r.Key }

// Events makes the example's input: n events over keys keys, event i of
// key k%keys with amount i%7+1.
func Events(n, keys int) []Event {
	out := make([]Event, n)
	for i := range out {
		out[i] = Event{Key: fmt.Sprintf("k%03d", i%keys), Amount: int64(i%7 + 1)}
	}
	return out
}

// Expected computes, without running anything, what the job writes for
// events: for every key, in the order of its events, its count and sum
// after each.
func Expected(events []Event) []Result {
	totals := map[string]*Total{}
	var out []Result
	for _, e := range events {
		t := totals[e.Key]
		if t == nil {
			t = &Total{}
			totals[e.Key] = t
		}
		Add(t, e)
		out = append(out, Running(e.Key, t))
	}
	return out
}
