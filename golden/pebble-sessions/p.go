// Package ps is the golden case of session windows on the pebble backend:
// sessions of a fixed gap with allowed lateness and a late side output,
// sessions whose gap each record sets, and sessions of processing time,
// all in a Pebble store per subtask (pebblestate.Sessions).
package ps

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

func ClickTime(c Click) int64 { return c.Ms }
func ByUser(c Click) string   { return c.User }

// Gap is short on page /c: a visitor who reaches it is about to leave.
func Gap(c Click) time.Duration {
	if c.Page == "/c" {
		return 300 * time.Millisecond
	}
	return time.Second
}

type Session struct {
	Clicks      int
	First, Last int64
}

func AddClick(s *Session, c Click) {
	if s.Clicks == 0 || c.Ms < s.First {
		s.First = c.Ms
	}
	if s.Clicks == 0 || c.Ms > s.Last {
		s.Last = c.Ms
	}
	s.Clicks++
}

func MergeSessions(dst, src *Session) {
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

func SessionLine(user string, w pipegen.Window, s *Session) string {
	return fmt.Sprintf("session %s [%d,%d) %v clicks=%d first=%d last=%d", user, w.Start.UnixMilli(), w.End.UnixMilli(), w.Firing, s.Clicks, s.First, s.Last)
}

func GapLine(user string, w pipegen.Window, s *Session) string {
	return fmt.Sprintf("gap-session %s [%d,%d) clicks=%d first=%d last=%d", user, w.Start.UnixMilli(), w.End.UnixMilli(), s.Clicks, s.First, s.Last)
}

// VisitLine leaves the window out: its bounds are processing times.
func VisitLine(user string, s *Session) string {
	return fmt.Sprintf("visit %s clicks=%d first=%d last=%d", user, s.Clicks, s.First, s.Last)
}

func LateLine(c Click) string { return fmt.Sprintf("late %s %d", c.User, c.Ms) }
