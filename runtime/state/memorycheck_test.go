package state

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/pipegen/pipegen/runtime/internal/invariants"
)

// TestMemoryCheck: the self-check of make invariants passes on a state
// whose keys came and went (entries compacted off their lists and handed
// to new keys), and catches each kind of drift in its bookkeeping.
func TestMemoryCheck(t *testing.T) {
	build := func() *Memory[int, testValue] {
		s := newTestState()
		for k := range 400 {
			v, _ := s.GetOrAdd(k)
			v.N = int64(k)
		}
		for k := range 300 {
			s.Delete(k) // compacts each key group's list, handing entries back
		}
		for k := 400; k < 420; k++ {
			s.GetOrAdd(k) // on entries handed back
		}
		s.Delete(399)
		return s
	}
	s := build()
	if len(s.free) == 0 {
		t.Fatal("no entry was handed back: the test does not reach the free list's check")
	}
	if got := invariants.Violation(s.check); got != "" {
		t.Fatalf("the check found %q in a sound state", got)
	}

	for _, tc := range []struct {
		name    string
		corrupt func(*Memory[int, testValue])
		want    string
	}{
		{"a deleted entry miscounted", func(s *Memory[int, testValue]) { s.dead[0]++ }, "deleted entries, counted"},
		{"a live key lost by the index", func(s *Memory[int, testValue]) { s.idx.drop(350) }, "not the one the index finds"},
		{"a live entry handed back", func(s *Memory[int, testValue]) {
			for _, e := range s.all[0] {
				if !e.deleted && e.own {
					s.free = append(s.free, (*restored[int, testValue])(unsafe.Pointer(e)))
					return
				}
			}
		}, "handed back for a new key: deleted false"},
		{"an entry handed back and listed as changed", func(s *Memory[int, testValue]) {
			s.dirty = append(s.dirty, &s.free[0].e)
		}, "still on the list of changes"},
	} {
		s := build()
		tc.corrupt(s)
		if got := invariants.Violation(s.check); got == "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: the check found %q, want a violated invariant that says %q", tc.name, got, tc.want)
		}
	}
}

// TestMemoryChangesCheck: the self-check passes on the lists of changes
// of a state captured twice, whose keys were changed, added and deleted
// in each epoch (some added and deleted in one, taken off the list
// again), and catches a change left off its list or miscounted.
func TestMemoryChangesCheck(t *testing.T) {
	build := func() *Memory[int, testValue] {
		s := newTestState()
		for k := range 3000 {
			v, _ := s.GetOrAdd(k)
			v.N = 1
		}
		writeCapture(t, s.Capture(true, 0, 0, testCodec))
		for k := range 1000 {
			v, _ := s.GetOrAdd(k)
			v.N++
		}
		for k := 1000; k < 1500; k++ {
			s.Delete(k)
		}
		c := s.Capture(false, 1, 1, testCodec)
		writeCapture(t, c)
		// In the current epoch: 3,000 keys added and deleted again
		// (taken off the list), 10 added and kept, 10 changed.
		for k := 10_000; k < 13_000; k++ {
			s.GetOrAdd(k)
			s.Delete(k)
		}
		for k := 20_000; k < 20_010; k++ {
			s.GetOrAdd(k)
		}
		for k := 2000; k < 2010; k++ {
			v, _ := s.GetOrAdd(k)
			v.N++
		}
		return s
	}
	s := build()
	if got := invariants.Violation(s.check); got != "" {
		t.Fatalf("the check found %q in a sound state", got)
	}
	if !s.tracking || len(s.pending) == 0 || len(s.dirty) == 0 {
		t.Fatalf("tracking %v, %d earlier lists, %d changes listed: the test does not reach the lists' checks", s.tracking, len(s.pending), len(s.dirty))
	}

	for _, tc := range []struct {
		name    string
		corrupt func(*Memory[int, testValue])
		want    string
	}{
		{"a change left off the list", func(s *Memory[int, testValue]) {
			s.dirty = s.dirty[:len(s.dirty)-1]
		}, "not on its list of changes"},
		{"a change listed twice", func(s *Memory[int, testValue]) {
			s.dirty = append(s.dirty, s.dirty[0])
		}, "twice"},
		{"a key added and deleted not counted", func(s *Memory[int, testValue]) {
			s.GetOrAdd(30_000)
			s.Delete(30_000)
			s.gone--
		}, "gone counts"},
		{"an earlier epoch's list with an entry untouched in it", func(s *Memory[int, testValue]) {
			s.pending[len(s.pending)-1].entries[0].ver = 0
		}, "last touched in epoch 0"},
	} {
		s := build()
		tc.corrupt(s)
		if got := invariants.Violation(s.check); got == "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: the check found %q, want a violated invariant that says %q", tc.name, got, tc.want)
		}
	}
}
