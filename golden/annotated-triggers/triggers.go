// Package triggers is the golden case of a window with early firings
// written as directives: "counts" and "deltas" of golden/triggers.
package triggers

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen"
)

//pipegen:pipeline triggers parallelism=2
//pipegen:source clicks connector=file parallelism=1 path=clicks.jsonl format=jsonl type=Click timestamps.extract=ClickTime
//pipegen:union all inputs=counts,deltas,dynamic,recent
//pipegen:sink out input=all connector=file path=out
//pipegen:sink late input=counts.late connector=file path=late

type Click struct {
	User string `json:"user"`
	Ms   int64  `json:"ms"`
}

func ClickTime(c Click) int64 { return c.Ms }
func ByUser(c Click) string   { return c.User }

// Sum counts clicks and adds their times.
type Sum struct {
	N  int
	Ms int64
}

// Add adds a click to a user's window: early every 3 clicks, then on time
// and late within a minute; and every 10s of event time, only what is new.
//
//pipegen:aggregate counts input=clicks key=ByUser window.tumbling=1m trigger.count=3 allowed-lateness=1m result=Result
//pipegen:aggregate dynamic input=clicks key=ByUser window.session-gap=Gap trigger.count=4 merge=Merge result=Result
//pipegen:aggregate recent input=clicks key=ByUser window.count=5 window.count-every=2 result=CountResult
//pipegen:aggregate deltas input=clicks key=ByUser window.sliding=1m window.every=30s trigger.every=10s trigger.mode=discard result=Result
func Add(s *Sum, c Click) { s.N++; s.Ms += c.Ms }

// Merge merges two sessions.
func Merge(dst, src *Sum) { dst.N += src.N; dst.Ms += src.Ms }

// Gap is the session gap a click sets: from 1s to 20s, by its time.
func Gap(c Click) time.Duration {
	return time.Duration(1000+(c.Ms%19000+19000)%19000) * time.Millisecond
}

// CountResult writes the result of a count window.
func CountResult(user string, s *Sum) string {
	return fmt.Sprintf("%s count n=%d ms=%d", user, s.N, s.Ms)
}

// Result writes a window's result with its firing.
func Result(user string, w pipegen.Window, s *Sum) string {
	return fmt.Sprintf("%s [%d,%d) %s n=%d ms=%d", user, w.Start.UnixMilli(), w.End.UnixMilli(), w.Firing, s.N, s.Ms)
}
