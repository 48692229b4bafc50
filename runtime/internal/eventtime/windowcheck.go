package eventtime

import "github.com/pipegen/pipegen/runtime/internal/invariants"

// check verifies that the panes of tumbling and sliding windows agree
// with themselves (invariants.On builds only, at each capture or
// snapshot of them; O(windows)):
//
//   - a pane's arrays hold one element per key: accumulators, creation
//     numbers, stamps (none before Track), the pane index's slots (when
//     the sliding windows are indexed across panes);
//   - each key of a pane is where the index finds it, so once per pane;
//   - the lowest index stamped since a capture (lo) is within the keys;
//   - the panes hold as many windows as Len says.
//
// A key twice in a pane would fire its window twice; an accumulator out
// of step with its key would fire another key's result. Sessions, kept
// per key, are not checked.
func (s *WindowState[K, A]) check() {
	if s.assign.Kind == Session {
		return
	}
	windows := 0
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
		invariants.Failf("window panes hold %d windows, Len counts %d", windows, s.n)
	}
}
