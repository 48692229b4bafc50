package state

// index finds the live entries of a memory state by key: a Go map while
// the state is small, a table (table.go) once it holds bigState keys.
//
// Both, because each is the faster one on one side. A small state's
// entries stay in the processor's cache, where a Go map's lookups (all
// of a key's candidates compared in one step) are a few nanoseconds
// faster than a table's probe from slot to slot: 4-5% more CPU in the
// word count. A large state is where restores take long, and a table is
// filled in the order of its slots (build), at half the cost of a Go
// map's cache miss per key; its lookups of keys spread over a large
// state are no slower either (the table's slots are smaller than a Go
// map's groups).
type index[K comparable, V any] struct {
	m   map[K]*entry[K, V] // while small; nil once big
	t   table[K, V]        // once big
	big bool
}

// bigState is how many keys make a state large: its index a table.
const bigState = 1 << 16

func newIndex[K comparable, V any]() index[K, V] {
	return index[K, V]{m: map[K]*entry[K, V]{}}
}

// grow makes the index a table with room for n keys, the map's entries
// moved into it.
func (x *index[K, V]) grow(n int) {
	x.t = newTable[K, V](max(n, len(x.m)))
	for _, e := range x.m {
		x.t.add(x.t.hash(e.key), e)
	}
	x.m, x.big = nil, true
}

func (x *index[K, V]) get(k K) *entry[K, V] {
	if !x.big {
		return x.m[k]
	}
	return x.t.get(k)
}

// lookup returns the entry of k, or nil, and what add takes to add one
// (k's hash in a table).
func (x *index[K, V]) lookup(k K) (*entry[K, V], uint64) {
	if !x.big {
		return x.m[k], 0
	}
	return x.t.lookup(k)
}

// add adds e, whose key has none; h is lookup's.
func (x *index[K, V]) add(h uint64, e *entry[K, V]) {
	if x.big {
		x.t.add(h, e)
		return
	}
	x.m[e.key] = e
	if len(x.m) >= bigState {
		x.grow(2 * len(x.m))
	}
}

// remove removes k's entry and returns it, or nil when k has none.
func (x *index[K, V]) remove(k K) *entry[K, V] {
	if x.big {
		return x.t.remove(k)
	}
	e := x.m[k]
	if e != nil {
		delete(x.m, k)
	}
	return e
}

func (x *index[K, V]) len() int {
	if x.big {
		return x.t.n
	}
	return len(x.m)
}

// reserve makes room for n keys in an index that holds none yet.
func (x *index[K, V]) reserve(n int) {
	switch {
	case x.big:
		x.t.reserve(n)
	case n >= bigState:
		x.grow(n)
	default:
		x.m = make(map[K]*entry[K, V], n)
	}
}

// all calls yield for every entry until it returns false. The index must
// not change meanwhile.
func (x *index[K, V]) all(yield func(*entry[K, V]) bool) {
	if x.big {
		x.t.all(yield)
		return
	}
	for _, e := range x.m {
		if !yield(e) {
			return
		}
	}
}
