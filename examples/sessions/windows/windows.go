// Package windows is the example of session windows: clicks like those
// of package sessions (more of them), sessionized by a windowed aggregate
// (window: session) instead of a process operator. A user's clicks less than sessions.Gap
// apart make a session; the window fires when the watermark passes the
// session's end, and a click that arrives within the allowed lateness
// after that updates it (a result with Late set). A click later than that
// goes to the side output late. On the pebble backend the sessions are in
// the subtask's Pebble store; its crash test (crash_test.go) computes the
// outputs independently and runs on both backends.
package windows

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/examples/sessions"
)

// The pipeline of pipeline.yaml, as //pipegen: directives.
//
//pipegen:pipeline sessionwindows parallelism=2
//pipegen:sink out input=sessions connector=file path=out format=jsonl
//pipegen:sink late input=sessions.late connector=file path=late format=jsonl

// Clicks is the number of clicks; Lateness the pipeline's allowed
// lateness.
const (
	Clicks   = 80_000
	Lateness = 10 * time.Second
)

type Click struct {
	Seq  uint64    `json:"seq"`
	User string    `json:"user"`
	At   time.Time `json:"at"`
}

// epoch is the event time of the first click.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// GenerateClick makes click seq as sessions.GenerateClick does, of
// sessions.Users users every sessions.ClickEvery: up to 1 s earlier than
// its place, or, one in fifty, a minute earlier (so late that the
// watermark has passed it). The crash test reads them at full speed: a
// source that waits for its rate sends the watermark when it waits, and
// whether a late click is still within the allowed lateness would depend
// on those moments.
//
//pipegen:source clicks connector=generator parallelism=1 timestamps.extract=ClickTime timestamps.max-out-of-orderness=2s
func GenerateClick(seq uint64) (Click, bool) {
	if seq >= Clicks {
		return Click{}, false
	}
	h := scramble(seq)
	at := epoch.Add(time.Duration(seq)*sessions.ClickEvery - time.Duration(h>>20%1000)*time.Millisecond)
	if h>>40%50 == 0 && seq > 1000 {
		at = at.Add(-time.Minute)
	}
	return Click{Seq: seq, User: fmt.Sprintf("user-%03d", h%sessions.Users), At: at}, true
}

// scramble is the splitmix64 finaliser: consecutive numbers look random.
func scramble(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func ClickTime(c Click) time.Time { return c.At }
func ByUser(c Click) string       { return c.User }

// Visit is a session's accumulator: its clicks and the times (Unix
// milliseconds) of its first and last.
type Visit struct {
	Clicks      int
	First, Last int64
}

// AddClick adds a click to a session.
//
//pipegen:aggregate sessions input=clicks key=ByUser window.session=30s allowed-lateness=10s merge=MergeVisits result=SessionOf
func AddClick(v *Visit, c Click) {
	ms := c.At.UnixMilli()
	if v.Clicks == 0 || ms < v.First {
		v.First = ms
	}
	if v.Clicks == 0 || ms > v.Last {
		v.Last = ms
	}
	v.Clicks++
}

// MergeVisits merges the session src into dst, when a click bridges them.
func MergeVisits(dst, src *Visit) {
	if src.Clicks == 0 {
		return
	}
	if dst.Clicks == 0 {
		*dst = *src
		return
	}
	dst.First = min(dst.First, src.First)
	dst.Last = max(dst.Last, src.Last)
	dst.Clicks += src.Clicks
}

// Session is a result of the sessions window: Late is set for an update
// within the allowed lateness, after the session fired.
type Session struct {
	User   string `json:"user"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	Clicks int    `json:"clicks"`
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
	Late   bool   `json:"late,omitempty"`
}

// SessionOf is the result of a user's session w.
func SessionOf(user string, w pipegen.Window, v *Visit) Session {
	return Session{User: user, Start: w.Start.UnixMilli(), End: w.End.UnixMilli(), Clicks: v.Clicks,
		First: v.First, Last: v.Last, Late: w.Firing == pipegen.Late}
}
