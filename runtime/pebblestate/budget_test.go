package pebblestate

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/vfs"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestBudget: without a memory limit every store has the unbounded
// sizes; with one, the stores together take at most half of it (when
// that is above their floors), the cache of decoded values holds fewer values the
// larger they are, and its batches fit it four times over.
func TestBudget(t *testing.T) {
	if b := budgetFor(math.MaxInt64, 4); b != unbounded {
		t.Errorf("without a limit: %+v, want %+v", b, unbounded)
	}
	const limit = 1 << 30
	for _, stores := range []int{1, 2, 8} {
		b := budgetFor(limit, stores)
		per := b.blockCache + 2*b.memTable + b.values
		if total := per * int64(stores); total > limit/2 {
			t.Errorf("%d stores: %d MiB in all, more than half of the limit of %d MiB", stores, total>>20, limit>>20)
		}
		small, _ := b.cacheSizes(16)
		large, spill := b.cacheSizes(1000)
		if !(small > large) || spill > large/4 {
			t.Errorf("%d stores: %d values of 16 bytes, %d of 1000 bytes in batches of %d", stores, small, large, spill)
		}
		if int64(large)*(entryOverhead+3*1000) > b.values {
			t.Errorf("%d stores: %d values of 1000 bytes overflow the %d bytes for values", stores, large, b.values)
		}
	}
	// A tiny limit leaves the floors.
	if b := budgetFor(8<<20, 16); b.blockCache != minBlockCache || b.memTable != minMemTable || b.values != minValues {
		t.Errorf("under a tiny limit: %+v", b)
	}
}

// TestOpenUnderMemoryLimit: a store opened under GOMEMLIMIT has the
// budget's sizes, and they follow the size of the values it writes.
func TestOpenUnderMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(64 << 20))
	_, task := testTask(t, vfs.NewMem(), 0)
	st := Open(task, 0, testCodec)
	defer st.close()
	want := budgetFor(64<<20, 1)
	if st.files.budget != want || st.maxCache != want.maxCache || st.spillAt != want.spillAt {
		t.Fatalf("opened with %+v, cache %d, batches of %d; want %+v", st.files.budget, st.maxCache, st.spillAt, want)
	}
	big := string(make([]byte, 2000))
	for k := range int64(2 * want.spillAt) {
		st.Put(k, &value{N: k, Name: big})
	}
	if st.maxCache >= want.maxCache/10 {
		t.Errorf("after writing values of 2000 bytes the cache holds %d values, want far fewer than the %d of 64-byte ones", st.maxCache, want.maxCache)
	}
	if n := len(st.cache); n > st.maxCache+st.spillAt {
		t.Errorf("%d values cached, more than %d", n, st.maxCache+st.spillAt)
	}
}

// TestBlockCacheKeepsFilters: under the floors of a tiny memory limit, a
// store that looks up keys it does not hold (every new key) finds its
// tables' Bloom filters in the block cache, not in the files. Pebble
// counts its memtables against the block cache: a cache of the block
// budget alone left no room for blocks.
func TestBlockCacheKeepsFilters(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 12 MB to a store")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(8 << 20))
	_, task := testTask(t, vfs.NewMem(), 0)
	st := Open(task, 0, testCodec)
	defer st.close()
	if st.files.budget.blockCache != minBlockCache || st.files.budget.memTable != minMemTable {
		t.Fatalf("opened with %+v, want the floors", st.files.budget)
	}
	name := string(make([]byte, 48))
	const keys = 200_000
	for k := range int64(keys) {
		st.Put(k, &value{N: k, Name: name})
	}
	st.spill(true)
	if err := st.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if tables := kv.Pebble(st.db).Metrics().Total().TablesCount; tables < 2 {
		t.Fatalf("the store has %d tables: the lookups would test one filter", tables)
	}
	before := kv.Pebble(st.db).Metrics().BlockCache
	const lookups = 20_000
	for k := range int64(lookups) {
		if v := st.Get(keys + k); v != nil {
			t.Fatalf("key %d: found %+v, never written", keys+k, v)
		}
	}
	after := kv.Pebble(st.db).Metrics().BlockCache
	misses := after.Misses - before.Misses
	t.Logf("%d lookups of absent keys: %d block cache hits, %d misses", lookups, after.Hits-before.Hits, misses)
	// A filter's false positives (about 1% per table) read a data block.
	if misses > lookups/4 {
		t.Errorf("%d lookups of absent keys missed the block cache %d times: the filters are read from the files", lookups, misses)
	}
}
