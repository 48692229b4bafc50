package pebblestate

import (
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// storeKeys counts the keys of the store, expired values included.
func storeKeys(t *testing.T, s *Keyed[int64, value]) int {
	t.Helper()
	s.spill(true)
	it, err := s.db.NewIter(&kv.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n
}

// TestKeyedTTL: on pebble, a value expires ttl after its last write (Put,
// or Get, which may change it), whether it is in the cache or only in
// the store; the write times survive a checkpoint and its restore; the
// sweep at barriers deletes the expired values from the store.
func TestKeyedTTL(t *testing.T) {
	now := int64(1_000_000)
	defer state.SetClock(func() int64 { return now })()
	c := *testCodec
	ttlCodec := c.WithTTL(100)
	fsys := vfs.NewMem()
	stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
	_, task := testTask(t, fsys, 0)
	s := Open(task, 0, ttlCodec)
	defer s.close()
	s.spillAt, s.maxCache = 16, 64 // most values only in the store
	for k := range int64(3000) {
		s.Put(k, &value{N: k})
	}
	now += 60
	for k := range int64(1000) {
		if v := s.Get(k); v == nil || v.N != k {
			t.Fatalf("Get(%d) at 60 ms = %v", k, v)
		}
	}
	now += 50
	if v := s.Get(2500); v != nil {
		t.Errorf("Get(2500) 110 ms after its Put = %v, want none", v)
	}
	if got := len(contents(s)); got != 1000 {
		t.Errorf("All yields %d values, want the 1000 read 50 ms ago", got)
	}
	// A checkpoint keeps the write times.
	cp, base := s.begin(1, 0)
	if err := stor.Prepare(1); err != nil {
		t.Fatal(err)
	}
	files, _, err := s.write(cp, base, stor)
	if err != nil {
		t.Fatal(err)
	}
	m := &storage.Manifest{ID: 1, Job: "p", MaxParallelism: 16, Mode: config.ExactlyOnce,
		Nodes: []storage.NodeState{{UID: "agg", Name: "agg", Kind: "aggregate", Parallelism: 1, Files: files}}}
	if err := stor.Commit(m); err != nil {
		t.Fatal(err)
	}
	rcp, rt := testTask(t, fsys, 1)
	back := Open(rt, 0, ttlCodec)
	if err := rcp.RunRestores(); err != nil {
		t.Fatal(err)
	}
	now += 30
	if got := len(contents(back)); got != 1000 {
		t.Errorf("restored, 80 ms after the reads: %d values, want 1000", got)
	}
	now += 30
	if got := len(contents(back)); got != 0 {
		t.Errorf("restored, 110 ms after the reads: %d values, want none", got)
	}
	back.close()
	// Sweeps delete the expired values from the store.
	if n := storeKeys(t, s); n < 2000 {
		t.Fatalf("the store has %d keys before the sweeps, want the expired ones too", n)
	}
	for range 4 {
		s.sweepExpired()
	}
	if n := storeKeys(t, s); n != 0 {
		t.Errorf("after the sweeps the store has %d keys, want none", n)
	}
}

// TestMapTTL: an entry of a map state on pebble expires ttl after its
// Put; Get, Contains, Len and All leave it out.
func TestMapTTL(t *testing.T) {
	now := int64(5000)
	defer state.SetClock(func() int64 { return now })()
	c := *testMapCodec
	_, task := testTask(t, vfs.NewMem(), 0)
	m := OpenMap(task, 0, "map.F", testCodec.EncodeKey, c.WithTTL(100))
	defer m.Store().close()
	m.Bind(1)
	m.Put("old", value{N: 1})
	now += 60
	m.Put("new", value{N: 2})
	m.Get("old") // a read writes nothing
	now += 50
	if _, ok := m.Get("old"); ok || m.Contains("old") {
		t.Error(`"old" is there 110 ms after its Put`)
	}
	var keys []string
	for k := range m.All() {
		keys = append(keys, k)
	}
	if len(keys) != 1 || keys[0] != "new" || m.Len() != 1 {
		t.Errorf("All yields %q, Len %d: want only new", keys, m.Len())
	}
}
