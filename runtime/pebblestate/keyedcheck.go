package pebblestate

import "github.com/pipegen/pipegen/runtime/internal/invariants"

// check verifies that the cache of decoded values agrees with its list
// of changed values (invariants.On builds only, at each barrier and each
// spill; O(cached values)):
//
//   - each entry on the list (dirty) is there once, marked as changed
//     since it was last written (gen s.seq+1), and is the one the cache
//     holds for its key;
//   - every cached entry marked as changed is on the list, none is
//     marked newer, and each is cached under its own key.
//
// A value changed but not listed would never be written to the store,
// and a checkpoint (and a restore from it) would miss it; a listed entry
// that the cache no longer holds for its key would write an old value
// over the key's newer one.
func (s *Keyed[K, V]) check() {
	listed := make(map[*entry[K, V]]bool, len(s.dirty))
	for _, e := range s.dirty {
		if listed[e] || e.gen != s.seq+1 || s.cache[e.key] != e {
			invariants.Failf("pebble state %s: the changed value of key %v is listed twice (%v), marked %d instead of %d, or not the one cached (%v)", s.name, e.key, listed[e], e.gen, s.seq+1, s.cache[e.key] != e)
		}
		listed[e] = true
	}
	for k, e := range s.cache {
		switch {
		case e.key != k:
			invariants.Failf("pebble state %s: the value of key %v is cached under key %v", s.name, e.key, k)
		case e.gen > s.seq+1:
			invariants.Failf("pebble state %s: the value of key %v is marked %d, past %d", s.name, k, e.gen, s.seq+1)
		case e.gen == s.seq+1 && !listed[e]:
			invariants.Failf("pebble state %s: the value of key %v changed since it was last written but is not on the list of changed values", s.name, k)
		}
	}
}
