// Package triggers is the golden case of windows with early firings on
// the pebble backend: the functions of the case triggers.
package triggers

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen"
)

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

func Add(s *Sum, c Click) { s.N++; s.Ms += c.Ms }

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
