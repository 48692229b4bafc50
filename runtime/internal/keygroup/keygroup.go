// Package keygroup hashes keys and maps them to key groups, and key groups
// to subtasks: key groups are the unit in which keyed state is routed,
// stored and moved when the parallelism changes.
package keygroup

import (
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Key hashing decides which key group a record belongs to, and key groups are
// stored in checkpoints: these functions must give the same value on every
// machine, in every process and in every version of pipegen. Go's map hash
// and hash/maphash are seeded per process, so they cannot be used.

// HashString hashes a string key.
func HashString(s string) uint64 { return xxhash.Sum64String(s) }

// HashBytes hashes a []byte key (or an array of bytes).
func HashBytes(b []byte) uint64 { return xxhash.Sum64(b) }

// HashUint64 hashes an integer key of any width (converted to uint64).
func HashUint64(x uint64) uint64 {
	// The finaliser of MurmurHash3: every input bit affects every output bit.
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// HashInt64 hashes a signed integer key.
func HashInt64(x int64) uint64 { return HashUint64(uint64(x)) }

// HashFloat64 hashes a float key; 0 and -0 are equal keys and hash alike.
func HashFloat64(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	return HashUint64(math.Float64bits(f))
}

// HashBool hashes a bool key.
func HashBool(b bool) uint64 {
	if b {
		return HashUint64(1)
	}
	return HashUint64(0)
}

// HashCombine folds the hash of one more field into h, for struct and array
// keys.
func HashCombine(h, field uint64) uint64 {
	hi, lo := bits.Mul64(h^field, 0x9e3779b97f4a7c15)
	return hi ^ lo
}

// KeyGroup maps a key hash to one of maxParallelism key groups.
func Of(hash uint64, maxParallelism int) int {
	// Multiply-shift instead of a modulo: as uniform and without a division.
	return int((uint64(uint32(hash^hash>>32)) * uint64(maxParallelism)) >> 32)
}

// KeyGroupOwner returns the subtask (of parallelism subtasks) that owns a
// key group: contiguous ranges of key groups per subtask, so that a
// snapshot written per range can be split or merged when the parallelism
// changes.
func Owner(keyGroup, maxParallelism, parallelism int) int {
	return keyGroup * parallelism / maxParallelism
}

// KeyGroupRange returns the key groups [start, end) that subtask owns.
func Range(subtask, maxParallelism, parallelism int) (start, end int) {
	start = (subtask*maxParallelism + parallelism - 1) / parallelism
	end = ((subtask+1)*maxParallelism + parallelism - 1) / parallelism
	return start, end
}
