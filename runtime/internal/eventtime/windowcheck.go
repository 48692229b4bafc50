package eventtime

import "github.com/pipegen/pipegen/runtime/internal/invariants"

// check verifies that the windows agree with themselves (invariants.On
// builds only, at each capture or snapshot of them; O(windows)):
//
//   - a pane's arrays hold one element per key: accumulators, creation
//     numbers, stamps (none before Track), the pane index's slots (when
//     the sliding windows are indexed across panes);
//   - each key of a pane is where the index finds it, so once per pane;
//   - the lowest index stamped since a capture (lo) is within the keys;
//   - the panes and the sessions hold as many windows as Len says.
//
// A key twice in a pane would fire its window twice; an accumulator out
// of step with its key would fire another key's result. Sessions are
// checked by checkSessions.
func (s *WindowState[K, A]) check() {
	windows := s.checkSessions()
	for p := range s.allPanes() {
		n := len(p.keys)
		seqs := len(p.seqs.off)
		if p.seqs.wide != nil {
			seqs = len(p.seqs.wide)
		}
		vers := 0
		if s.tracking {
			vers = n
		}
		slots := 0
		if s.ix.width > 0 {
			slots = n
		}
		if len(p.accs) != n || seqs != n || len(p.vers) != vers || len(p.slots) != slots {
			invariants.Failf("window pane [%d, %d): %d keys, %d accumulators, %d creation numbers, %d stamps (tracking %v), %d index slots (indexed %v)",
				p.w.Start, p.w.End, n, len(p.accs), seqs, len(p.vers), s.tracking, len(p.slots), s.ix.width > 0)
		}
		if p.lo < 0 || int(p.lo) > n {
			invariants.Failf("window pane [%d, %d): lowest index stamped %d, of %d keys", p.w.Start, p.w.End, p.lo, n)
		}
		for i, k := range p.keys {
			if j, ok := s.indexOf(p, k); !ok || int(j) != i {
				invariants.Failf("window pane [%d, %d): key %v is at %d, the index finds it at %d (found %v)", p.w.Start, p.w.End, k, i, j, ok)
			}
		}
		windows += n
	}
	if windows != s.n {
		invariants.Failf("window panes and sessions hold %d windows, Len counts %d", windows, s.n)
	}
}

// checkSessions verifies the sessions (part of check) and returns how
// many there are:
//
//   - each key's sessions are its own, not dropped, not empty, in order
//     of start and apart: two that overlap or touch should have merged
//     (addSession), and a record between them would join the wrong one;
//   - each session is where the heap says (its hi) and due when its
//     window ends, or once fired when it is dropped: one due too late
//     fires late, or is never dropped;
//   - the heap holds every session and nothing else, ordered by (time,
//     creation number).
func (s *WindowState[K, A]) checkSessions() int {
	n := 0
	for k, wins := range s.sessions {
		if len(wins) == 0 {
			invariants.Failf("session windows: key %v has an empty list of sessions", k)
		}
		for i, e := range wins {
			if e.key != k || e.dead {
				invariants.Failf("session %v listed under key %v: its key %v, dropped %v", e.w, k, e.key, e.dead)
			}
			if e.w.Start >= e.w.End {
				invariants.Failf("session %v of key %v is empty", e.w, k)
			}
			if i > 0 && wins[i-1].w.End >= e.w.Start {
				invariants.Failf("sessions %v and %v of key %v overlap or touch: they should be one", wins[i-1].w, e.w, k)
			}
			if e.hi < 0 || e.hi >= len(s.sessionHeap) || s.sessionHeap[e.hi] != e {
				invariants.Failf("session %v of key %v is not at its place %d in the heap of %d", e.w, k, e.hi, len(s.sessionHeap))
			}
			due := e.w.MaxTimestamp()
			if e.fired {
				due = s.cleanup(e.w)
			}
			if e.at != due {
				invariants.Failf("session %v of key %v (fired %v) is due at %d, want %d", e.w, k, e.fired, e.at, due)
			}
		}
		n += len(wins)
	}
	if n != len(s.sessionHeap) {
		invariants.Failf("session windows: the keys hold %d sessions, the heap %d", n, len(s.sessionHeap))
	}
	for i := 1; i < len(s.sessionHeap); i++ {
		if s.sessionHeap.less(i, (i-1)/2) {
			invariants.Failf("session heap out of order at %d", i)
		}
	}
	return n
}
