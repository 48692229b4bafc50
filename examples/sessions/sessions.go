// Package sessions is the example of a process operator with side outputs:
// sessionization of clicks, with the sessions of one click and the late
// clicks sent to side outputs of their own types.
//
// A generator makes Clicks with event times, most of them a little out of
// order (within the source's bound of 2 s), a few much later than that.
// The process operator sessions, keyed by user, keeps a user's clicks
// until the watermark reaches their time (each click's own event-time
// timer), then takes them in time order: a click less than Gap after the
// session's last one extends it, any other starts a new one; the timer at
// the last click plus Gap closes a session. A closed session goes to the
// main output, or, when it has one click, to the side output bounces; a
// click that arrives behind the watermark (its time already passed: it
// could not be put in its place) goes to the side output late. Its crash
// test (crash_test.go) computes all three outputs independently.
package sessions

import (
	"fmt"
	"slices"
	"time"

	"github.com/pipegen/pipegen"
)

// The pipeline of pipeline.yaml, as //pipegen: directives.
//
//pipegen:pipeline sessions parallelism=2
//pipegen:sink out input=sessions connector=file path=out format=jsonl
//pipegen:sink bounces input=sessions.bounces connector=file path=bounces format=jsonl
//pipegen:sink late input=sessions.late connector=file path=late format=jsonl

// Clicks and Users are the numbers of clicks and users; Gap the time
// without clicks that closes a user's session.
const (
	Clicks = 20_000
	Users  = 400
	Gap    = 30 * time.Second
)

// ClickEvery is the event time between two clicks, before their jitter.
const ClickEvery = 100 * time.Millisecond

// epoch is the event time of the first click.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type Click struct {
	Seq  uint64    `json:"seq"`
	User string    `json:"user"`
	At   time.Time `json:"at"`
}

// Session is a user's clicks with no gap of Gap or more between them.
type Session struct {
	User   string    `json:"user"`
	Start  time.Time `json:"start"`
	Last   time.Time `json:"last"`
	Clicks int       `json:"clicks"`
}

// scramble is the splitmix64 finaliser: consecutive numbers look random.
func scramble(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// GenerateClick makes click seq: up to 1 s earlier than its place, or,
// one in fifty, a minute earlier (so late that the watermark has passed
// it).
//
//pipegen:source clicks connector=generator parallelism=1 timestamps.extract=ClickTime timestamps.max-out-of-orderness=2s
func GenerateClick(seq uint64) (Click, bool) {
	if seq >= Clicks {
		return Click{}, false
	}
	h := scramble(seq)
	at := epoch.Add(time.Duration(seq)*ClickEvery - time.Duration(h>>20%1000)*time.Millisecond)
	if h>>40%50 == 0 && seq > 1000 {
		at = at.Add(-time.Minute)
	}
	return Click{Seq: seq, User: fmt.Sprintf("user-%03d", h%Users), At: at}, true
}

func ClickTime(c Click) time.Time { return c.At }
func ByUser(c Click) string       { return c.User }

// UserState is what sessions keeps per user: the clicks waiting for the
// watermark, and the open session (Clicks 0: none).
type UserState struct {
	Pending []Click
	Open    Session
}

// OnClick keeps a click until the watermark reaches its time, or sends it
// to the side output late when the watermark has passed it already.
//
//pipegen:process sessions input=clicks key=ByUser on-timer=OnTimer
func OnClick(user string, s *UserState, c Click, ctx pipegen.Context, emit func(Session)) {
	if !ctx.Timestamp().After(ctx.Watermark()) {
		ctx.Output("late", c)
		return
	}
	s.Pending = append(s.Pending, c)
	ctx.TimerAt(ctx.Timestamp())
}

// OnTimer closes the open session when Gap has passed since its last
// click, then takes the clicks of the timer's time.
func OnTimer(user string, s *UserState, at time.Time, ctx pipegen.Context, emit func(Session)) {
	if s.Open.Clicks > 0 && !at.Before(s.Open.Last.Add(Gap)) {
		closeSession(s, ctx, emit)
	}
	for _, c := range s.Pending {
		if !c.At.Equal(at) {
			continue
		}
		if s.Open.Clicks == 0 {
			s.Open = Session{User: user, Start: c.At}
		}
		s.Open.Last = c.At
		s.Open.Clicks++
		ctx.TimerAt(c.At.Add(Gap)) // closes the session unless a click comes first
	}
	s.Pending = slices.DeleteFunc(s.Pending, func(c Click) bool { return c.At.Equal(at) })
	if len(s.Pending) == 0 && s.Open.Clicks == 0 {
		ctx.Clear()
	}
}

// closeSession emits the open session: to the main output, or to the side
// output bounces when it has one click.
func closeSession(s *UserState, ctx pipegen.Context, emit func(Session)) {
	if s.Open.Clicks == 1 {
		ctx.Output("bounces", s.Open)
	} else {
		emit(s.Open)
	}
	s.Open = Session{}
}
