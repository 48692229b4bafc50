package pebblestate

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/invariants"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestKeyedCheck: the self-check of make invariants passes on a store
// whose small cache spilled batches and dropped values, and catches a
// cache out of step with its list of changed values.
func TestKeyedCheck(t *testing.T) {
	build := func(t *testing.T) *Keyed[int64, value] {
		_, task := testTask(t, vfs.NewMem(), 0)
		st := Open(task, 0, testCodec)
		t.Cleanup(st.close)
		st.spillAt, st.maxCache = 16, 64
		model, rng := map[int64]value{}, rand.New(rand.NewPCG(5, 6))
		mutate(st, model, rng, 2000, 300)
		for len(st.dirty) < 2 {
			mutate(st, model, rng, 1, 300)
		}
		return st
	}
	st := build(t)
	if got := invariants.Violation(st.check); got != "" {
		t.Fatalf("the check found %q in a sound store", got)
	}

	for _, tc := range []struct {
		name    string
		corrupt func(*Keyed[int64, value])
		want    string
	}{
		{"a changed value not listed", func(st *Keyed[int64, value]) {
			st.dirty = st.dirty[1:]
		}, "not on the list"},
		{"a changed value listed twice", func(st *Keyed[int64, value]) {
			st.dirty = append(st.dirty, st.dirty[0])
		}, "listed twice (true)"},
		{"a listed value the cache dropped", func(st *Keyed[int64, value]) {
			delete(st.cache, st.dirty[0].key)
		}, "not the one cached (true)"},
		{"a value marked past the next capture", func(st *Keyed[int64, value]) {
			for _, e := range st.cache {
				if !st.isDirty(e) {
					e.gen = st.seq + 2
					return
				}
			}
			t.Fatal("every cached value changed since it was written")
		}, "past"},
	} {
		st := build(t)
		tc.corrupt(st)
		if got := invariants.Violation(st.check); got == "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: the check found %q, want a violated invariant that says %q", tc.name, got, tc.want)
		}
	}
}
