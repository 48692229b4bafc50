package eventtime

import (
	"time"

	"github.com/pipegen/pipegen"
)

// ReduceAcc is the accumulator of a windowed reduce: the first record of a
// window is its value, and each later one is reduced into it.
type ReduceAcc[T any] struct {
	Set bool
	V   T
}

// Add reduces v into the accumulator with f.
func (a *ReduceAcc[T]) Add(v T, f func(acc, in T) T) {
	if a.Set {
		a.V = f(a.V, v)
		return
	}
	a.V, a.Set = v, true
}

// MergeReduce returns the merge of two reduce accumulators with f, for
// session windows that grow together.
func MergeReduce[T any](f func(acc, in T) T) func(dst, src *ReduceAcc[T]) {
	return func(dst, src *ReduceAcc[T]) {
		if src.Set {
			dst.Add(src.V, f)
		}
	}
}

// UserWindow is the window a result function sees.
func UserWindow(w Window) pipegen.Window {
	return pipegen.Window{Start: MillisTime(w.Start), End: MillisTime(w.End)}
}

// NowMillis is processing time: the wall clock in Unix milliseconds.
func NowMillis() int64 { return time.Now().UnixMilli() }
