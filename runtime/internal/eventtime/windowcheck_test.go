package eventtime

import (
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/invariants"
)

// TestWindowCheck: the self-check of make invariants passes on tumbling
// and sliding windows (indexed across panes, and kept in slices) with
// changes tracked, and catches each kind of drift in a pane.
func TestWindowCheck(t *testing.T) {
	assigners := map[string]func() *WindowState[int64, int64]{
		"tumbling": func() *WindowState[int64, int64] {
			return NewWindowState[int64, int64](WindowAssigner{Kind: Tumbling, Size: 1000}, 0, nil)
		},
		"sliding": func() *WindowState[int64, int64] {
			return NewWindowState[int64, int64](WindowAssigner{Kind: Sliding, Size: 1000, Slide: 500}, 0, nil)
		},
		"sliced": func() *WindowState[int64, int64] {
			return NewSlicedWindows[int64, int64](WindowAssigner{Kind: Sliding, Size: 1000, Slide: 500}, func(dst, src *int64) { *dst += *src })
		},
	}
	for name, newState := range assigners {
		build := func() *WindowState[int64, int64] {
			s := newState()
			for i := range int64(300) {
				if i == 100 {
					s.Track()
				}
				s.Add(i%37, 10*i, MinTime, func(a *int64) { *a++ }, nil)
			}
			s.Advance(1200, func(int64, Window, *int64) {})
			return s
		}
		if got := invariants.Violation(build().check); got != "" {
			t.Fatalf("%s: the check found %q in sound windows", name, got)
		}
		for _, tc := range []struct {
			name    string
			corrupt func(*pane[int64, int64])
			want    string
		}{
			{"an accumulator too many", func(p *pane[int64, int64]) { p.accs = append(p.accs, 0) }, "accumulators"},
			{"two keys swapped", func(p *pane[int64, int64]) { p.keys[0], p.keys[1] = p.keys[1], p.keys[0] }, "the index finds it"},
			{"lo past the keys", func(p *pane[int64, int64]) { p.lo = int32(len(p.keys) + 1) }, "lowest index stamped"},
		} {
			s := build()
			for p := range s.allPanes() {
				if len(p.keys) >= 2 {
					tc.corrupt(p)
					break
				}
			}
			if got := invariants.Violation(s.check); got == "" || !strings.Contains(got, tc.want) {
				t.Errorf("%s, %s: the check found %q, want a violated invariant that says %q", name, tc.name, got, tc.want)
			}
		}
		s := build()
		s.n++
		if got := invariants.Violation(s.check); !strings.Contains(got, "Len counts") {
			t.Errorf("%s, a window too many counted: the check found %q", name, got)
		}
	}
}
