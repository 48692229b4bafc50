package eventtime

import (
	"math"

	"github.com/pipegen/pipegen/runtime/internal/intkey"
	"github.com/pipegen/pipegen/runtime/internal/pages"
)

// keyIndex finds a key's index in a tumbling window's pane (pane.idx).
//
// Keys of most windowed aggregates and joins are 64-bit integers (an
// auction, a bucket, a person), and within one window they are close
// together: Nexmark q7 keys its first stage by 64 buckets, q8 its sellers
// and its join by people registered in the window. For such keys the
// index is an array by key minus a base, one load where a map lookup
// hashed the key (the maps were 5% of q7's and q8's CPU); it turns into a
// map when the keys are too sparse for it: an array longer than
// denseSlack plus denseRatio slots per key. Other keys take the map from
// the start.
//
// The array is addressed modulo 2^64 (key minus base as an unsigned
// number), so keys near the ends of int64 need no special case: distinct
// keys never share a slot of an array shorter than 2^64.
type keyIndex[K comparable] struct {
	m map[K]int32
	// dense holds, while m is nil, the index plus one of key base+j at j,
	// 0 for no key; n is the number of keys in it.
	dense []int32
	base  int64
	n     int
}

const (
	denseSlack = 1024
	denseRatio = 8
)

// newKeyIndex returns an empty index, an array when ints (intkey.Is) and a
// map with room for hint keys otherwise.
func newKeyIndex[K comparable](ints bool, hint int) keyIndex[K] {
	if ints {
		return keyIndex[K]{}
	}
	return keyIndex[K]{m: make(map[K]int32, hint)}
}

// get returns k's index, if k is in x.
func (x *keyIndex[K]) get(k K) (int32, bool) {
	if x.m != nil {
		i, ok := x.m[k]
		return i, ok
	}
	if j := uint64(intkey.Of(k) - x.base); j < uint64(len(x.dense)) {
		if v := x.dense[j]; v != 0 {
			return v - 1, true
		}
	}
	return 0, false
}

// put sets k's index to i.
func (x *keyIndex[K]) put(k K, i int32) {
	if x.m != nil {
		x.m[k] = i
		return
	}
	u := intkey.Of(k)
	j := uint64(u - x.base)
	if j >= uint64(len(x.dense)) {
		if !x.cover(u) {
			x.toMap()
			x.m[k] = i
			return
		}
		j = uint64(u - x.base)
	}
	if x.dense[j] == 0 {
		x.n++
	}
	x.dense[j] = i + 1
}

// cover grows the array to hold key u, at least doubling it; false when
// it would be too sparse.
func (x *keyIndex[K]) cover(u int64) bool {
	old := uint64(len(x.dense))
	if old == 0 {
		x.base = u
		x.dense = make([]int32, 64)
		return true
	}
	limit := uint64(denseSlack + denseRatio*(x.n+1))
	// The lengths with u at the top and at the bottom: one of them may
	// overflow, which makes it the longer.
	up := uint64(u-x.base) + 1
	if up == 0 {
		up = math.MaxUint64
	}
	down := uint64(x.base-u) + old
	if down < old {
		down = math.MaxUint64
	}
	need := min(up, down)
	if need > limit {
		return false
	}
	size := min(max(need, 2*old), max(need, limit))
	dense := make([]int32, size)
	// get and put read a slot before they write it (package pages).
	pages.Touch(dense[:0])
	if up <= down {
		copy(dense, x.dense)
	} else {
		off := size - old
		copy(dense[off:], x.dense)
		x.base -= int64(off)
	}
	x.dense = dense
	return true
}

// toMap turns the array into a map.
func (x *keyIndex[K]) toMap() {
	x.m = make(map[K]int32, 2*x.n)
	for j, v := range x.dense {
		if v != 0 {
			x.m[intkey.To[K](x.base+int64(j))] = v - 1
		}
	}
	x.dense, x.n = nil, 0
}
