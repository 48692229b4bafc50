package state

import "github.com/pipegen/pipegen/runtime/internal/invariants"

// check verifies that a state bound to key groups agrees with itself
// (invariants.On builds only, at each Capture; O(entries listed)):
//
//   - every entry on key group i's list is of that group and not
//     dropped; its deleted ones number dead[i], and the others are what
//     the index finds for their keys, as many as the index holds;
//   - an entry handed back for a new key (free) is a deleted one that
//     getOrAdd made, there once, and on no list of changes (dirty,
//     pending), which would otherwise write its next key's value as the
//     old key's change into a delta.
//
// It checks nothing while a restore still holds entries outside the
// index (batch, deltas).
func (s *Memory[K, V]) check() {
	if s.all == nil || len(s.batch) > 0 || len(s.deltas) > 0 {
		return
	}
	live := 0
	for i, list := range s.all {
		dead := 0
		for _, e := range list {
			switch {
			case int(e.kg) != s.start+i:
				invariants.Failf("state entry of key %v (key group %d) is on key group %d's list", e.key, e.kg, s.start+i)
			case e.dropped:
				invariants.Failf("state entry of key %v is on its key group's list and dropped from it", e.key)
			case e.deleted:
				dead++
				continue
			case s.idx.get(e.key) != e:
				invariants.Failf("state entry of key %v is on its key group's list but not the one the index finds", e.key)
			}
			live++
		}
		if dead != s.dead[i] {
			invariants.Failf("key group %d's list holds %d deleted entries, counted %d", s.start+i, dead, s.dead[i])
		}
	}
	if n := s.idx.len(); live != n {
		invariants.Failf("the key groups' lists hold %d live entries, the index %d", live, n)
	}
	free := make(map[*entry[K, V]]bool, len(s.free))
	for _, p := range s.free {
		e := &p.e
		if !e.deleted || !e.own || free[e] {
			invariants.Failf("state entry of key %v handed back for a new key: deleted %v, made by getOrAdd %v, handed back twice %v", e.key, e.deleted, e.own, free[e])
		}
		free[e] = true
	}
	if len(free) == 0 {
		return
	}
	listed := func(es []*entry[K, V], which string) {
		for _, e := range es {
			if free[e] {
				invariants.Failf("state entry of key %v is handed back for a new key but still on the list of changes of %s", e.key, which)
			}
		}
	}
	listed(s.dirty, "the current epoch")
	for _, l := range s.pending {
		listed(l.entries, "an earlier epoch")
	}
}
