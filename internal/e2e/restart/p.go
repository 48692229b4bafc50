// Package restart is the end-to-end test of restarts after a panic in user
// code: a reduce that panics once (or always), and a job that must recover
// from its newest checkpoint with exactly-once output, or give up and name
// the record.
package restart

import "os"

// Ev is one event: a key and an amount.
type Ev struct{ K, N int64 }

// Gen makes 100000 events over 10 keys.
func Gen(seq uint64) (Ev, bool) {
	if seq >= 100000 {
		return Ev{}, false
	}
	return Ev{K: int64(seq % 10), N: 1}, true
}

// Key keys an event by K.
func Key(e Ev) int64 { return e.K }

// Sum adds events up. When key 3 reaches 4000 it panics: always when the
// environment has PANIC=always, otherwise only the first time (a file
// named marker in the working directory remembers).
func Sum(a, b Ev) Ev {
	a.N += b.N
	if a.K == 3 && a.N == 4000 {
		if os.Getenv("PANIC") == "always" {
			panic("boom")
		}
		if _, err := os.Stat("marker"); err != nil {
			os.WriteFile("marker", nil, 0o644)
			panic("boom")
		}
	}
	return a
}
