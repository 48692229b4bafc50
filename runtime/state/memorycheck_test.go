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
