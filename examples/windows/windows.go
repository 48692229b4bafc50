// Package windows is pipegen's event-time example: clicks with timestamps,
// counted per user in tumbling windows of ten seconds of event time. The
// clicks arrive out of order by up to two seconds, within the source's
// bound; one in a thousand is half a minute late and goes to the side
// output instead of a window.
package windows

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/pipegen/pipegen"
)

// The pipeline of pipeline.yaml, as //pipegen: directives (its twin in Go:
// see docs/annotations.md).
//
//pipegen:pipeline windows parallelism=2 checkpoint.interval=1s
//pipegen:sink out input=counts connector=file path=out format=jsonl
//pipegen:sink late input=counts.late connector=file path=late format=jsonl

// Click is one click of a user at a time.
type Click struct {
	User string    `json:"user"`
	At   time.Time `json:"at"`
}

// Clicks is the number of clicks made: 2 million, unless the environment
// variable CLICKS says otherwise (the benchmark makes 10 million).
var Clicks = clicksFromEnv()

func clicksFromEnv() int {
	if n, err := strconv.Atoi(os.Getenv("CLICKS")); err == nil && n > 0 {
		return n
	}
	return 2_000_000
}

// start is the event time of the first click.
var start = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// NextClick makes click seq: 50 users, a click every 10ms of event time,
// up to 2s out of order, and every 1000th click 30s late.
//
//pipegen:source clicks connector=generator timestamps.extract=ClickTime timestamps.max-out-of-orderness=2s
func NextClick(seq uint64) (Click, bool) {
	return NextClickOf(seq, Clicks)
}

// NextClickOf is click seq of n.
func NextClickOf(seq uint64, n int) (Click, bool) {
	if seq >= uint64(n) {
		return Click{}, false
	}
	at := start.Add(time.Duration(seq) * 10 * time.Millisecond)
	at = at.Add(-time.Duration(mix(seq)%2000) * time.Millisecond)
	if seq%1000 == 999 {
		at = at.Add(-30 * time.Second)
	}
	return Click{User: fmt.Sprintf("user-%02d", mix(seq^0x5bd1e995)%50), At: at}, true
}

// mix scrambles seq, the same way in every run.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}

// ClickTime is a click's event time.
func ClickTime(c Click) time.Time { return c.At }

// ByUser keys a click by its user.
func ByUser(c Click) string { return c.User }

// Count is the number of clicks of a user in a window.
type Count struct {
	N int64
}

// AddClick counts one click.
//
//pipegen:aggregate counts input=clicks key=ByUser window.tumbling=10s result=Result
func AddClick(n *Count, _ Click) { n.N++ }

// UserCount is one window's result.
type UserCount struct {
	User   string    `json:"user"`
	Window time.Time `json:"window"`
	Clicks int64     `json:"clicks"`
}

// Result makes the output of one user's window.
func Result(user string, w pipegen.Window, n *Count) UserCount {
	return UserCount{User: user, Window: w.Start, Clicks: n.N}
}

// FiringCount is one firing of a window with a trigger (early.yaml).
type FiringCount struct {
	User   string    `json:"user"`
	Window time.Time `json:"window"`
	Firing string    `json:"firing"`
	Clicks int64     `json:"clicks"`
}

// FiringResult makes the output of one firing of a user's window: early,
// on-time (final) or late.
func FiringResult(user string, w pipegen.Window, n *Count) FiringCount {
	return FiringCount{User: user, Window: w.Start, Firing: w.Firing.String(), Clicks: n.N}
}
