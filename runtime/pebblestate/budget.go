package pebblestate

import (
	"math"
	"runtime/debug"
)

// budget is how much memory one store and the cache in front of it may
// take: Pebble's block cache and memtables (allocated outside the Go
// heap, which GOMEMLIMIT does not see), and the values kept decoded and
// the batches they are written in (on the Go heap).
type budget struct {
	// blockCache and memTable are Pebble's sizes: at most two memtables
	// of memTable bytes are held (one being filled, one being flushed).
	blockCache, memTable int64
	// values is the room for decoded values, in bytes, when bounded
	// (0: maxCache and spillAt are fixed).
	values int64
	// maxCache and spillAt size the cache of decoded values (Keyed).
	maxCache, spillAt int
}

// The sizes of a store when no memory limit is set: about 200 MiB per
// store, for state larger than memory on a machine with room to spare.
var unbounded = budget{blockCache: 64 << 20, memTable: 16 << 20, maxCache: 1 << 18, spillAt: 1 << 17}

// budgetFor divides the memory the job's pebble stores may take, half of
// GOMEMLIMIT when one is set (limit, math.MaxInt64 when not), among its
// stores: a quarter of a store's share to the block cache, a quarter to
// its two memtables and half to the decoded values and their batches,
// each at least its floor. Without a limit every store gets the
// unbounded sizes.
func budgetFor(limit int64, stores int) budget {
	if limit <= 0 || limit == math.MaxInt64 {
		return unbounded
	}
	share := limit / 2 / int64(max(stores, 1))
	b := budget{
		blockCache: max(share/4, minBlockCache),
		memTable:   max(share/8, minMemTable),
		values:     max(share/2, minValues),
	}
	b.maxCache, b.spillAt = b.cacheSizes(defaultValueSize)
	return b
}

// The floors of a store's sizes, about 20 MiB in all, whatever the limit:
// below them a store spends its time reading the Bloom filters and
// indexes of its tables again (a block cache of 1 MiB made a job of 3M
// keys take 2.4 times the CPU of one with 64 MiB), and flushing tiny
// memtables.
const (
	minBlockCache = 8 << 20
	minMemTable   = 4 << 20
	minValues     = 4 << 20
)

// defaultValueSize is the size of an encoded key and value that the
// cache is sized for before it has written any.
const defaultValueSize = 64

// entryOverhead is about what a cached value takes beyond its decoded
// bytes: the entry, its slot in the map and in the list of changes.
const entryOverhead = 128

// cacheSizes returns the most values kept decoded and the batch size
// that fit the budget's room for values, given the average size of an
// encoded key and value: a decoded value is counted at twice its encoded
// size, and a batch holds encoded copies. While a checkpoint of the store
// is taken, up to 4 batches of changes wait in the cache: spillAt is a
// quarter of maxCache, so that they fit in it.
func (b budget) cacheSizes(encoded int) (maxCache, spillAt int) {
	if b.values == 0 {
		return b.maxCache, b.spillAt
	}
	per := int64(entryOverhead + 3*max(encoded, 8))
	maxCache = int(max(b.values/per, 1024))
	return maxCache, max(maxCache/4, 256)
}

// memoryLimit is the program's GOMEMLIMIT (math.MaxInt64 when none).
func memoryLimit() int64 { return debug.SetMemoryLimit(-1) }
