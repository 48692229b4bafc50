package state

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkLookup compares a table's lookups with a Go map's, the
// memory state's hot path: keys read at random among n (uint64 keys,
// and strings of 8 to 24 bytes), each entry read as the state reads it.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		keys := make([]uint64, n)
		strs := make([]string, n)
		for i := range keys {
			keys[i] = rand.Uint64()
			strs[i] = fmt.Sprintf("%0*x", 8+rand.IntN(17), keys[i])
		}
		order := make([]int, 1<<16)
		for i := range order {
			order[i] = rand.IntN(n)
		}
		b.Run(fmt.Sprint("n=", n, "/uint64/map"), func(b *testing.B) { benchMap(b, keys, order) })
		b.Run(fmt.Sprint("n=", n, "/uint64/table"), func(b *testing.B) { benchTable(b, keys, order) })
		b.Run(fmt.Sprint("n=", n, "/string/map"), func(b *testing.B) { benchMap(b, strs, order) })
		b.Run(fmt.Sprint("n=", n, "/string/table"), func(b *testing.B) { benchTable(b, strs, order) })
	}
}

func benchMap[K comparable](b *testing.B, keys []K, order []int) {
	m := make(map[K]*entry[K, int], len(keys))
	for _, k := range keys {
		m[k] = &entry[K, int]{key: k}
	}
	i := 0
	for b.Loop() {
		if e := m[keys[order[i&(len(order)-1)]]]; e == nil || e.ver != 0 {
			b.Fatal("missing")
		}
		i++
	}
}

func benchTable[K comparable](b *testing.B, keys []K, order []int) {
	t := newTable[K, int](len(keys))
	for _, k := range keys {
		t.add(t.hash(k), &entry[K, int]{key: k})
	}
	i := 0
	for b.Loop() {
		if e := t.get(keys[order[i&(len(order)-1)]]); e == nil || e.ver != 0 {
			b.Fatal("missing")
		}
		i++
	}
}

// TestTable changes a table and a Go map alike, at random, over few keys
// so that runs of full slots form and deletions move entries back, and
// checks after each change that both hold the same keys and that every
// entry is found.
func TestTable(t *testing.T) {
	tab := newTable[int, int](0)
	want := map[int]*entry[int, int]{}
	check := func(op string) {
		t.Helper()
		if tab.n != len(want) {
			t.Fatalf("after %s: the table holds %d keys, want %d", op, tab.n, len(want))
		}
		for k, e := range want {
			if got := tab.get(k); got != e {
				t.Fatalf("after %s: get(%d) = %p, want %p", op, k, got, e)
			}
		}
		n := 0
		for e := range tab.all {
			if want[e.key] != e {
				t.Fatalf("after %s: the table holds key %d, which was removed", op, e.key)
			}
			n++
		}
		if n != len(want) {
			t.Fatalf("after %s: all yields %d entries, want %d", op, n, len(want))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20_000 {
		k := rng.IntN(300)
		switch {
		case rng.IntN(3) > 0 && want[k] == nil:
			e := &entry[int, int]{key: k}
			tab.add(tab.hash(k), e)
			want[k] = e
		default:
			got := tab.remove(k)
			if got != want[k] {
				t.Fatalf("remove(%d) = %p, want %p", k, got, want[k])
			}
			delete(want, k)
		}
		if i%97 == 0 {
			check(fmt.Sprint("change ", i))
		}
	}
	check("the changes")
	// build adds batches of new keys, sorted, to what is there.
	for round := range 3 {
		batch := make([]slot[int, int], 0, 5000)
		for len(batch) < cap(batch) {
			k := 1000 + rng.IntN(1_000_000)
			if want[k] != nil {
				continue
			}
			e := &entry[int, int]{key: k}
			want[k] = e
			batch = append(batch, slot[int, int]{tab.hash(k), e})
		}
		tab.build(batch, make([]slot[int, int], len(batch)))
		check(fmt.Sprint("build ", round))
	}
	for k := range want {
		if tab.remove(k) == nil {
			t.Fatalf("remove(%d) found nothing", k)
		}
		delete(want, k)
		if len(want)%1000 == 0 {
			check("removing all")
		}
	}
}
