package state

import (
	"maps"
	"testing"
)

// fakeClock is the processing time of a test, in milliseconds.
type fakeClock struct{ now int64 }

func (c *fakeClock) read() int64 { return c.now }

func ttlCodec(ms int64) *Codec[int, testValue] {
	c := *testCodec
	return c.WithTTL(ms)
}

// TestMemoryTTL: a value expires ttl after its last write (Put, or Get,
// which may change it): a Get then finds none and All leaves it out; the
// write times survive a capture and its restore; a sweep at the barriers
// deletes the expired values no one reads, so that they leave the
// checkpoints.
func TestMemoryTTL(t *testing.T) {
	clk := &fakeClock{now: 1_000_000}
	defer SetClock(clk.read)()
	const ttl = 100
	s := newTestState()
	s.SetTTL(ttl)
	for k := range 3000 {
		s.Put(k, &testValue{N: int64(k)})
	}
	clk.now += 60
	for k := range 1000 {
		if v := s.Get(k); v == nil || v.N != int64(k) {
			t.Fatalf("Get(%d) at 60 ms = %v", k, v)
		}
	}
	clk.now += 50 // 110 ms after the Puts, 50 after the Gets of 0..999
	if v := s.Get(2000); v != nil {
		t.Errorf("Get(2000) 110 ms after its Put with a ttl of 100 = %v, want none", v)
	}
	live := values(s)
	if len(live) != 1000 {
		t.Errorf("All yields %d values, want the 1000 read 50 ms ago", len(live))
	}
	// A capture keeps the write times: restored 30 ms later, the values
	// read 80 ms ago are there, and 30 ms later still, gone.
	c := s.Capture(true, 0, 0, ttlCodec(ttl))
	w := writeCapture(t, c)
	clk.now += 30
	back := newTestState()
	back.SetTTL(ttl)
	for kg, sec := range w.sections {
		if err := back.RestoreSection(kg, sec, false, ttlCodec(ttl)); err != nil {
			t.Fatal(err)
		}
	}
	back.Restored()
	if got := values(back); !maps.Equal(got, live) {
		t.Errorf("restored %d values, want the %d live ones", len(got), len(live))
	}
	clk.now += 30
	if v := back.Get(5); v != nil {
		t.Errorf("Get(5) 110 ms after its last read = %v, want none", v)
	}
	// The sweeps at barriers delete what expired, unread.
	before := s.Len()
	for range sweepShare + 1 {
		s.Sweep()
	}
	if s.Len() != 0 {
		t.Errorf("after %d sweeps %d of %d expired values are left", sweepShare+1, s.Len(), before)
	}
	// GetOrAdd finds an expired value gone too.
	back.Put(6, &testValue{N: 6})
	clk.now += 99
	if v, added := back.GetOrAdd(6); added || v.N != 6 {
		t.Errorf("GetOrAdd(6) 99 ms after its Put = %+v, added %v; want its value, not added", *v, added)
	}
	clk.now += 100
	if v, added := back.GetOrAdd(6); !added || v.N != 0 {
		t.Errorf("GetOrAdd(6) 100 ms after its last read = %+v, added %v; want a zero value, added", *v, added)
	}
}

// TestMemoryMapTTL: an entry of a map state expires ttl after its Put;
// Get, Contains, Len and All leave it out.
func TestMemoryMapTTL(t *testing.T) {
	clk := &fakeClock{now: 5000}
	defer SetClock(clk.read)()
	m := newTestMap()
	m.Store().SetTTL(100)
	m.Bind(1)
	m.Put("old", testValue{N: 1})
	clk.now += 60
	m.Put("new", testValue{N: 2})
	m.Get("old") // a read writes nothing: "old" still expires at 100
	clk.now += 50
	if _, ok := m.Get("old"); ok || m.Contains("old") {
		t.Error(`"old" is there 110 ms after its Put`)
	}
	if v, ok := m.Get("new"); !ok || v.N != 2 {
		t.Errorf(`Get("new") = %v, %v`, v, ok)
	}
	var keys []string
	for k := range m.All() {
		keys = append(keys, k)
	}
	if len(keys) != 1 || keys[0] != "new" || m.Len() != 1 {
		t.Errorf("All yields %q, Len %d: want only new", keys, m.Len())
	}
	clk.now += 100
	m.Store().Sweep()
	if m.Len() != 0 || len(m.index) != 0 || m.Store().Len() != 0 {
		t.Errorf("after a sweep: Len %d, index %v, %d entries", m.Len(), m.index, m.Store().Len())
	}
}
