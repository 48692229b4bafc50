// Package et is the golden case of event time: timestamps, sliding and
// session windows, a late side output, a process operator with event-time
// timers, an interval join and a window join.
package et

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen"
)

type Click struct {
	User string `json:"user"`
	Page string `json:"page"`
	Ms   int64  `json:"ms"`
}

type View struct {
	Page string `json:"page"`
	At   string `json:"at"`
}

func ClickTime(c Click) int64 { return c.Ms }

func ViewTime(v View) time.Time {
	t, err := time.Parse(time.RFC3339Nano, v.At)
	if err != nil {
		panic(err)
	}
	return t
}

func ByUser(c Click) string  { return c.User }
func ByPage(c Click) string  { return c.Page }
func ViewPage(v View) string { return v.Page }

// Latest keeps the click with the highest time.
func Latest(a, b Click) Click {
	if b.Ms > a.Ms {
		return b
	}
	return a
}

func (c Click) String() string { return fmt.Sprintf("%s %s @%d", c.User, c.Page, c.Ms) }

type Session struct {
	Clicks int
	First  int64
	Last   int64
}

func AddClick(s *Session, c Click) {
	if s.Clicks == 0 || c.Ms < s.First {
		s.First = c.Ms
	}
	s.Last = max(s.Last, c.Ms)
	s.Clicks++
}

func MergeSessions(dst, src *Session) {
	if src.Clicks == 0 {
		return
	}
	if dst.Clicks == 0 || src.First < dst.First {
		dst.First = src.First
	}
	dst.Last = max(dst.Last, src.Last)
	dst.Clicks += src.Clicks
}

func SessionLine(user string, w pipegen.Window, s *Session) string {
	return fmt.Sprintf("session %s [%d,%d) clicks=%d first=%d last=%d", user, w.Start.UnixMilli(), w.End.UnixMilli(), s.Clicks, s.First, s.Last)
}

func PageLine(page string, w pipegen.Window, s *Session) string {
	return fmt.Sprintf("page %s [%d,%d) clicks=%d", page, w.Start.UnixMilli(), w.End.UnixMilli(), s.Clicks)
}

// RecentLine is a page's clicks in a sliding window, merged from its
// slices.
func RecentLine(page string, w pipegen.Window, s *Session) string {
	return fmt.Sprintf("recent %s [%d,%d) clicks=%d first=%d last=%d", page, w.Start.UnixMilli(), w.End.UnixMilli(), s.Clicks, s.First, s.Last)
}

// Seen counts a user's clicks and reports them 1s of event time after the
// first one, then starts again.
type Seen struct {
	N     int
	Armed bool
}

func Watch(user string, s *Seen, c Click, ctx pipegen.Context, emit func(string)) {
	s.N++
	if !s.Armed {
		s.Armed = true
		ctx.TimerAt(time.UnixMilli(c.Ms + 1000))
	}
}

func Report(user string, s *Seen, at time.Time, ctx pipegen.Context, emit func(string)) {
	emit(fmt.Sprintf("watch %s at %d: %d clicks", user, at.UnixMilli(), s.N))
	ctx.Clear()
}

func Pair(c Click, v View) string {
	return fmt.Sprintf("pair %s %s click@%d view@%s", c.User, c.Page, c.Ms, v.At)
}

func LatestLine(c Click) string { return "latest " + c.String() }

func LateLine(c Click) string { return "late " + c.String() }
