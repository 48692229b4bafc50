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

// TestSessionCheck: the self-check passes on sessions that merged, fired
// (kept for their lateness) and were dropped, and catches each kind of
// drift in a key's sessions and their heap.
func TestSessionCheck(t *testing.T) {
	build := func() *WindowState[int64, int64] {
		s := NewWindowState[int64, int64](WindowAssigner{Kind: Session, Gap: 100}, 500, func(dst, src *int64) { *dst += *src })
		for i := range int64(400) {
			// Key i%7 gets records 70 ms apart (one growing session)
			// until 2,000, then 250 ms apart (a session each); two
			// records far apart and one between them bridge two
			// sessions of key 100.
			ts := 10 * i
			if ts >= 2000 {
				ts = 2000 + 250*(i-200)
			}
			s.Add(i%7, ts, MinTime, func(a *int64) { *a++ }, nil)
		}
		s.Add(100, 60_000, MinTime, func(a *int64) { *a++ }, nil)
		s.Add(100, 60_150, MinTime, func(a *int64) { *a++ }, nil)
		s.Add(100, 60_080, MinTime, func(a *int64) { *a++ }, nil)
		s.Advance(30_000, func(int64, Window, *int64) {})
		return s
	}
	s := build()
	if got := invariants.Violation(s.check); got != "" {
		t.Fatalf("the check found %q in sound sessions", got)
	}
	if len(s.sessions[100]) != 1 {
		t.Fatalf("key 100 has %d sessions, want the two bridged into one", len(s.sessions[100]))
	}
	fired := 0
	for _, e := range s.sessionHeap {
		if e.fired {
			fired++
		}
	}
	if fired == 0 || fired == len(s.sessionHeap) {
		t.Fatalf("%d of %d sessions fired: the check should see both kinds", fired, len(s.sessionHeap))
	}
	// The sessions of a key that has two or more, to corrupt.
	twoOf := func(s *WindowState[int64, int64]) []*winEntry[int64, int64] {
		for _, wins := range s.sessions {
			if len(wins) >= 2 {
				return wins
			}
		}
		t.Fatal("no key has two sessions")
		return nil
	}
	twoOf(s)
	for _, tc := range []struct {
		name    string
		corrupt func(s *WindowState[int64, int64], wins []*winEntry[int64, int64])
		want    string
	}{
		{"two sessions touching", func(_ *WindowState[int64, int64], wins []*winEntry[int64, int64]) {
			wins[1].w.Start = wins[0].w.End
		}, "should be one"},
		{"a session out of its place in the heap", func(_ *WindowState[int64, int64], wins []*winEntry[int64, int64]) {
			wins[0].hi = -1
		}, "its place"},
		{"a session due at the wrong time", func(_ *WindowState[int64, int64], wins []*winEntry[int64, int64]) {
			wins[0].at++
		}, "is due at"},
		{"a dropped session still listed", func(_ *WindowState[int64, int64], wins []*winEntry[int64, int64]) {
			wins[0].dead = true
		}, "dropped true"},
		{"a session missing from the heap", func(s *WindowState[int64, int64], wins []*winEntry[int64, int64]) {
			s.sessionHeap.remove(wins[0].hi)
			wins[0].hi = 0
		}, "heap"},
		{"a window too many counted", func(s *WindowState[int64, int64], _ []*winEntry[int64, int64]) {
			s.n++
		}, "Len counts"},
	} {
		s := build()
		tc.corrupt(s, twoOf(s))
		if got := invariants.Violation(s.check); got == "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: the check found %q, want a violated invariant that says %q", tc.name, got, tc.want)
		}
	}
}
