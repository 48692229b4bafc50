package state

import "github.com/pipegen/pipegen/runtime/internal/intkey"

// index finds the live entries of a memory state by key: pages of
// consecutive keys (dense) or a Go map while the state is small, a table
// (table.go) once it holds bigState keys.
//
// A map and a table, because each is the faster one on one side. A small
// state's entries stay in the processor's cache, where a Go map's lookups
// (all of a key's candidates compared in one step) are a few nanoseconds
// faster than a table's probe from slot to slot: 4-5% more CPU in the
// word count. A large state is where restores take long, and a table is
// filled in the order of its slots (build), at half the cost of a Go
// map's cache miss per key; its lookups of keys spread over a large
// state are no slower either (the table's slots are smaller than a Go
// map's groups).
//
// Pages, for keys that are 8-byte integers while they are dense enough:
// the keys of a stream of ids (Nexmark's auctions) are mostly recent
// ones, next to each other, and a key's entry is then found in a page by
// key minus a base, without hashing, in pages that stay in the cache
// (the map's lookup and hash were 13% of q4's CPU). Keys too sparse for
// pages (pages spanning more than denseMin times the keys, past
// freePages: addDense) go to the map, once and for good; at bigState
// keys, pages turn into a table as a map does, for the restores.
type index[K comparable, V any] struct {
	m   map[K]*entry[K, V] // while small and not dense; nil once big
	t   table[K, V]        // once big
	big bool
	// dense is set while the entries are in pages: pages[i] holds the
	// keys from (base+i)<<pageBits on, nil when it holds none; n is the
	// number of keys in pages.
	dense bool
	pages []*entryPage[K, V]
	base  int64
	n     int
	// spare is the last page left empty, for the next page needed: the
	// keys of a stream of ids move on a page at a time, and a page is 2
	// KiB that the collector would otherwise get back and the allocator
	// clear again (q4: 10 MB of pages in 20M events).
	spare *entryPage[K, V]
}

// An entryPage holds the entries of pageSize consecutive integer keys,
// nil for a key without one, and how many it holds.
type entryPage[K comparable, V any] struct {
	n int32
	e [pageSize]*entry[K, V]
}

const (
	pageBits = 8
	pageSize = 1 << pageBits
	pageMask = pageSize - 1
	// The pages may span up to denseMin times the keys they hold, past
	// the first freePages: beyond that the keys go to the map.
	denseMin  = 32
	freePages = 64
)

// bigState is how many keys make a state large: its index a table.
const bigState = 1 << 16

func newIndex[K comparable, V any]() index[K, V] {
	if intkey.Is[K]() {
		return index[K, V]{dense: true}
	}
	return index[K, V]{m: map[K]*entry[K, V]{}}
}

// grow makes the index a table with room for n keys, the entries moved
// into it.
func (x *index[K, V]) grow(n int) {
	x.t = newTable[K, V](max(n, x.len()))
	x.all(func(e *entry[K, V]) bool {
		x.t.add(x.t.hash(e.key), e)
		return true
	})
	x.m, x.big = nil, true
	x.dense, x.pages, x.n, x.spare = false, nil, 0, nil
}

// toMap moves the entries from the pages to a map, for good.
func (x *index[K, V]) toMap() {
	m := make(map[K]*entry[K, V], x.n)
	x.all(func(e *entry[K, V]) bool {
		m[e.key] = e
		return true
	})
	x.m = m
	x.dense, x.pages, x.n, x.spare = false, nil, 0, nil
}

// getDense returns the entry of key v in the pages, or nil.
func (x *index[K, V]) getDense(v int64) *entry[K, V] {
	if i := uint64(v>>pageBits - x.base); i < uint64(len(x.pages)) {
		if pg := x.pages[i]; pg != nil {
			return pg.e[v&pageMask]
		}
	}
	return nil
}

func (x *index[K, V]) get(k K) *entry[K, V] {
	switch {
	case x.dense:
		return x.getDense(intkey.Of(k))
	case !x.big:
		return x.m[k]
	}
	return x.t.get(k)
}

// lookup returns the entry of k, or nil, and what add takes to add one
// (k's hash in a table).
func (x *index[K, V]) lookup(k K) (*entry[K, V], uint64) {
	switch {
	case x.dense:
		return x.getDense(intkey.Of(k)), 0
	case !x.big:
		return x.m[k], 0
	}
	return x.t.lookup(k)
}

// add adds e, whose key has none; h is lookup's.
func (x *index[K, V]) add(h uint64, e *entry[K, V]) {
	switch {
	case x.big:
		x.t.add(h, e)
		return
	case x.dense:
		if x.addDense(e) {
			return
		}
		x.toMap()
	}
	x.m[e.key] = e
	if len(x.m) >= bigState {
		x.grow(2 * len(x.m))
	}
}

// addDense adds e to the pages, or returns false when the keys would be
// too sparse for them with it.
func (x *index[K, V]) addDense(e *entry[K, V]) bool {
	v := intkey.Of(e.key)
	p := v >> pageBits
	if len(x.pages) == 0 {
		x.base = p
	}
	i := p - x.base
	if i < 0 || i >= int64(len(x.pages)) {
		lo, hi := min(p, x.base), max(p, x.base+int64(len(x.pages))-1)
		span := hi - lo + 1
		if span > freePages && span*pageSize > denseMin*int64(x.n+1) {
			return false // too sparse: a page per few keys or so
		}
		if x.n+1 >= bigState {
			return false // the map turns into a table
		}
		if i < 0 {
			pages := make([]*entryPage[K, V], span, span+span/4)
			copy(pages[-i:], x.pages)
			x.pages, x.base, i = pages, p, 0
		} else {
			for int64(len(x.pages)) <= i {
				x.pages = append(x.pages, nil)
			}
		}
	}
	pg := x.pages[i]
	if pg == nil {
		if pg = x.spare; pg != nil {
			x.spare = nil // empty: removeDense left it so
		} else {
			pg = new(entryPage[K, V])
		}
		x.pages[i] = pg
	}
	pg.e[v&pageMask] = e
	pg.n++
	x.n++
	return true
}

// removeDense takes key v's entry out of the pages and returns it, or
// nil; pages left empty go, and those at the front with them.
func (x *index[K, V]) removeDense(v int64) *entry[K, V] {
	i := uint64(v>>pageBits - x.base)
	if i >= uint64(len(x.pages)) {
		return nil
	}
	pg := x.pages[i]
	if pg == nil || pg.e[v&pageMask] == nil {
		return nil
	}
	e := pg.e[v&pageMask]
	pg.e[v&pageMask] = nil
	x.n--
	if pg.n--; pg.n == 0 {
		x.pages[i] = nil
		x.spare = pg
		j := 0
		for j < len(x.pages) && x.pages[j] == nil {
			j++
		}
		// The slice's front goes (append makes a new array when its end
		// is reached); its back stays, room for the next keys.
		x.pages, x.base = x.pages[j:], x.base+int64(j)
		if len(x.pages) == 0 {
			x.pages = x.pages[:0:0]
		}
	}
	return e
}

// remove removes k's entry and returns it, or nil when k has none.
func (x *index[K, V]) remove(k K) *entry[K, V] {
	switch {
	case x.dense:
		return x.removeDense(intkey.Of(k))
	case x.big:
		return x.t.remove(k)
	}
	e := x.m[k]
	if e != nil {
		delete(x.m, k)
	}
	return e
}

// drop removes k's entry, which is there: remove without returning it,
// a map's with one lookup.
func (x *index[K, V]) drop(k K) {
	if !x.dense && !x.big {
		delete(x.m, k)
		return
	}
	x.remove(k)
}

func (x *index[K, V]) len() int {
	switch {
	case x.dense:
		return x.n
	case x.big:
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
	case x.dense:
		// Pages are made as keys come.
	default:
		x.m = make(map[K]*entry[K, V], n)
	}
}

// all calls yield for every entry until it returns false. The index must
// not change meanwhile.
func (x *index[K, V]) all(yield func(*entry[K, V]) bool) {
	switch {
	case x.dense:
		for _, pg := range x.pages {
			if pg == nil {
				continue
			}
			for _, e := range pg.e {
				if e != nil && !yield(e) {
					return
				}
			}
		}
		return
	case x.big:
		x.t.all(yield)
		return
	}
	for _, e := range x.m {
		if !yield(e) {
			return
		}
	}
}
