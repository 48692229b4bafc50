// Package sliced is a fixture of dsl's tests: aggregates with a merge
// function on sliding windows, some of which can be kept in slices of
// the slide and some of which cannot (the compiler warns).
package sliced

import "time"

type Click struct {
	Page string
	At   int64
}

func Clicks(seq uint64) (Click, bool) {
	return Click{Page: string(rune('a' + seq%3)), At: int64(seq)}, seq < 10
}

func ClickTime(c Click) time.Time { return time.UnixMilli(c.At) }

func ByPage(c Click) string { return c.Page }

type Count struct{ N int64 }

func AddClick(acc *Count, _ Click) { acc.N++ }

func MergeCounts(dst, src *Count) { dst.N += src.N }

func CountOf(page string, acc *Count) Count { return *acc }

// Seen holds a slice: a merged accumulator would share its array.
type Seen struct{ Pages []string }

func AddSeen(acc *Seen, c Click) { acc.Pages = append(acc.Pages, c.Page) }

func MergeSeen(dst, src *Seen) { dst.Pages = append(dst.Pages, src.Pages...) }

func SeenOf(page string, acc *Seen) int { return len(acc.Pages) }
