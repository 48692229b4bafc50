package state

import (
	"hash/maphash"

	"github.com/pipegen/pipegen/runtime/internal/pages"
)

// table is the index of a memory state: its live entries by key, in an
// open-addressing hash table with linear probing.
//
// It is not a Go map because of restores. A key's home slot is the top
// bits of its hash, so the slots are in the order of the hashes, and a
// restore that inserts its keys sorted by hash (build) writes the table
// front to back, in the processor's cache, where inserting into a large
// Go map in the order the files hold the keys takes a cache miss per key
// (half of a restore's time). A lookup in a large table costs what one
// in a Go map does: a hash of the key, a slot, then the entry, which the
// state reads anyway. In the cache a Go map's lookups are a few
// nanoseconds faster, which is why small states keep one (index.go).
type table[K comparable, V any] struct {
	slots []slot[K, V]
	// shift is 64 less log2(len(slots)): a hash's top bits are its home.
	shift uint
	n     int
	seed  maphash.Seed
}

// slot is one place of a table: a key's hash and its entry, nil when
// the slot is free. Comparing the hash first keeps a probe from reading
// the entries of other keys.
type slot[K comparable, V any] struct {
	h uint64
	e *entry[K, V]
}

// minSlots is the fewest slots of a table.
const minSlots = 8

func newTable[K comparable, V any](n int) table[K, V] {
	t := table[K, V]{seed: maphash.MakeSeed()}
	t.alloc(slotsFor(n))
	return t
}

// slotsFor is the number of slots that holds n keys at a load of at most
// 3/4 (linear probing slows down quickly above that).
func slotsFor(n int) int {
	size := minSlots
	for size*3 < n*4 {
		size *= 2
	}
	return size
}

func (t *table[K, V]) alloc(size int) {
	t.slots = make([]slot[K, V], 0, size)
	// A table's first access to a slot is a read (is it free?), which
	// would map a page of zeros and fault again on the write after it
	// (package pages); in a restore of 5M keys per subtask, the flushes
	// of the other processors' TLBs that those second faults take were
	// 15-20% of the CPU.
	pages.Touch(t.slots)
	t.slots = t.slots[:size]
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
}

func (t *table[K, V]) hash(k K) uint64 { return maphash.Comparable(t.seed, k) }

// get returns the entry of k, or nil.
func (t *table[K, V]) get(k K) *entry[K, V] {
	e, _ := t.lookup(k)
	return e
}

// lookup returns the entry of k, or nil, and k's hash.
func (t *table[K, V]) lookup(k K) (*entry[K, V], uint64) {
	return t.lookupHash(k, t.hash(k))
}

// lookupHash is lookup of k, whose hash is h.
func (t *table[K, V]) lookupHash(k K, h uint64) (*entry[K, V], uint64) {
	mask := len(t.slots) - 1
	for i := int(h >> t.shift); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.e == nil {
			return nil, h
		}
		if s.h == h && s.e.key == k {
			return s.e, h
		}
	}
}

// add adds e, of hash h (lookup's), whose key is not in the table.
func (t *table[K, V]) add(h uint64, e *entry[K, V]) {
	t.reserve(t.n + 1)
	t.place(h, e)
	t.n++
}

// place puts e, of hash h, in the first free slot from its home.
func (t *table[K, V]) place(h uint64, e *entry[K, V]) {
	mask := len(t.slots) - 1
	for i := int(h >> t.shift); ; i = (i + 1) & mask {
		if t.slots[i].e == nil {
			t.slots[i] = slot[K, V]{h, e}
			return
		}
	}
}

// reserve makes room for n keys. The old slots are read in order and
// their hashes' top bits keep that order in the new table: growing
// writes it front to back too.
func (t *table[K, V]) reserve(n int) {
	if n*4 <= len(t.slots)*3 {
		return
	}
	old := t.slots
	t.alloc(slotsFor(n))
	for _, s := range old {
		if s.e != nil {
			t.place(s.h, s.e)
		}
	}
}

// remove removes k's entry and returns it, or nil when k has none. The
// entries after it in its run move back (no tombstones): every entry
// stays reachable from its home without a gap.
func (t *table[K, V]) remove(k K) *entry[K, V] {
	h := t.hash(k)
	mask := len(t.slots) - 1
	i := int(h >> t.shift)
	for {
		s := &t.slots[i]
		if s.e == nil {
			return nil
		}
		if s.h == h && s.e.key == k {
			break
		}
		i = (i + 1) & mask
	}
	e := t.slots[i].e
	t.slots[i] = slot[K, V]{}
	t.n--
	for j := (i + 1) & mask; t.slots[j].e != nil; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home is
		// after i, cyclically up to j.
		home := int(t.slots[j].h >> t.shift)
		var stays bool
		if i <= j {
			stays = i < home && home <= j
		} else {
			stays = i < home || home <= j
		}
		if !stays {
			t.slots[i] = t.slots[j]
			t.slots[j] = slot[K, V]{}
			i = j
		}
	}
	return e
}

// all calls yield for every entry until it returns false. The table must
// not change meanwhile.
func (t *table[K, V]) all(yield func(*entry[K, V]) bool) {
	for _, s := range t.slots {
		if s.e != nil && !yield(s.e) {
			return
		}
	}
}

// sortBits is how many top bits of the hashes build sorts by: 2048
// runs, few enough for their ends to stay in the cache while the sort
// writes them, each going to a 2048th of the table (8 KiB of a table of
// a million slots, 64 KiB of one of eight million), which stays in the
// cache while the run is written into it.
const sortBits = 11

// build adds the entries of batch, whose keys are not in the table, with
// their hashes set: sorted by their homes (the top bits of the hashes,
// one pass of a counting sort into tmp, as long as batch), they are
// written into the table front to back.
func (t *table[K, V]) build(batch, tmp []slot[K, V]) {
	t.reserve(t.n + len(batch))
	t.n += len(batch)
	if len(batch) < 1<<sortBits {
		// Too few to be worth sorting.
		for _, s := range batch {
			t.place(s.h, s.e)
		}
		return
	}
	for _, s := range sortByHome(batch, tmp, func(s *slot[K, V]) uint64 { return s.h }) {
		t.place(s.h, s.e)
	}
}

// sortByHome returns items sorted by the top sortBits bits of their
// hashes (h returns an item's) in tmp, which is at least as long: one
// pass of a counting sort, which keeps the order of items whose bits are
// the same.
func sortByHome[T any](items, tmp []T, h func(*T) uint64) []T {
	var start [1<<sortBits + 1]int32
	const shift = 64 - sortBits
	for i := range items {
		start[h(&items[i])>>shift+1]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	tmp = tmp[:len(items)]
	for i := range items {
		b := h(&items[i]) >> shift
		tmp[start[b]] = items[i]
		start[b]++
	}
	return tmp
}
