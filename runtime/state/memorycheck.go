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
//     old key's change into a delta;
//   - once changes are tracked, every entry on the key groups' lists
//     touched in the current epoch is on its list of changes (dirty),
//     which holds each entry once and only entries touched in it, gone
//     counting those of them added and deleted in it; an entry on an
//     earlier epoch's list was touched in that epoch or since. An entry
//     changed but not listed would be missing from the next delta: a
//     restore from it would lose the change.
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
	if len(free) > 0 {
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
	s.checkChanges()
}

// checkChanges verifies the lists of changes (part of check).
func (s *Memory[K, V]) checkChanges() {
	if !s.tracking {
		if len(s.dirty) > 0 {
			invariants.Failf("state lists %d changes before changes are tracked", len(s.dirty))
		}
		return
	}
	dirty := make(map[*entry[K, V]]bool, len(s.dirty))
	gone := 0
	for _, e := range s.dirty {
		if dirty[e] || e.ver != s.epoch {
			invariants.Failf("state entry of key %v is on the current epoch's (%d) list of changes twice (%v) or touched in epoch %d", e.key, s.epoch, dirty[e], e.ver)
		}
		dirty[e] = true
		if e.deleted && e.fresh {
			gone++
		}
	}
	if gone != s.gone {
		invariants.Failf("the current epoch's list of changes holds %d entries added and deleted in it, gone counts %d", gone, s.gone)
	}
	for _, list := range s.all {
		for _, e := range list {
			if e.ver == s.epoch && !dirty[e] {
				invariants.Failf("state entry of key %v (deleted %v) was touched in the current epoch %d but is not on its list of changes", e.key, e.deleted, s.epoch)
			}
		}
	}
	for _, l := range s.pending {
		for _, e := range l.entries {
			if e.ver < l.epoch {
				invariants.Failf("state entry of key %v is on the list of changes of epoch %d but was last touched in epoch %d", e.key, l.epoch, e.ver)
			}
		}
	}
}
