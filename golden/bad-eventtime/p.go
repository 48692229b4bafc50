// Package p is the golden case of event-time mistakes: timestamps, windows,
// lateness, side outputs, process operators and joins that do not fit.
package p

import (
	"time"

	"github.com/pipegen/pipegen"
)

type Click struct {
	User string
	At   time.Time
}

type View struct {
	Page string
	At   int64
}

type Count struct{ N int }

func ClickTime(c Click) time.Time { return c.At }
func ViewTime(v View) string      { return "" }
func ByUser(c Click) string       { return c.User }
func ByPage(v View) int           { return 0 }
func PageName(v View) string      { return v.Page }
func AddClick(n *Count, c Click)  { n.N++ }
func Pair(c Click, v View) string { return "" }
func Same(c Click) Click          { return c }

func Handle(user string, n *Count, c Click, ctx pipegen.Context) {}
func SelfPair(a, b Click) string                                 { return "" }

func CountLine(user string, w pipegen.Window, n *Count) string { return "" }
func Latest(a, b Click) Click                                  { return b }
func MergeCounts(dst, src *Count)                              { dst.N += src.N }

func NextClick(seq uint64) (Click, bool) { return Click{}, true }
