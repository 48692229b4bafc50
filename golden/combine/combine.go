// Package combine is the golden case of a combined edge: a tumbling-window
// aggregate with a merge function at parallelism 2, whose senders send
// partial accumulators instead of records.
package combine

import (
	"fmt"

	"github.com/pipegen/pipegen"
)

type Click struct {
	User string `json:"user"`
	Page string `json:"page"`
	Ms   int64  `json:"ms"`
}

func ClickTime(c Click) int64 { return c.Ms }

func ByPage(c Click) string { return c.Page }

// Clicks counts a window's clicks and remembers the first and last.
type Clicks struct {
	N     int
	First int64
	Last  int64
}

func AddClick(s *Clicks, c Click) {
	if s.N == 0 || c.Ms < s.First {
		s.First = c.Ms
	}
	s.Last = max(s.Last, c.Ms)
	s.N++
}

func MergeClicks(dst, src *Clicks) {
	if src.N == 0 {
		return
	}
	if dst.N == 0 || src.First < dst.First {
		dst.First = src.First
	}
	dst.Last = max(dst.Last, src.Last)
	dst.N += src.N
}

func PageLine(page string, w pipegen.Window, s *Clicks) string {
	return fmt.Sprintf("page %s [%d,%d) clicks=%d first=%d last=%d", page, w.Start.UnixMilli(), w.End.UnixMilli(), s.N, s.First, s.Last)
}
