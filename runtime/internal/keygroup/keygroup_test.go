package keygroup

import (
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestKeyGroupRangesCoverOwners(t *testing.T) {
	for _, maxP := range []int{1, 7, 128, 1000} {
		for p := 1; p <= min(maxP, 33); p++ {
			next := 0
			for sub := 0; sub < p; sub++ {
				start, end := Range(sub, maxP, p)
				if start != next {
					t.Fatalf("maxP=%d p=%d subtask %d starts at %d, want %d", maxP, p, sub, start, next)
				}
				for kg := start; kg < end; kg++ {
					if owner := Owner(kg, maxP, p); owner != sub {
						t.Fatalf("maxP=%d p=%d key group %d: owner %d, range of subtask %d", maxP, p, kg, owner, sub)
					}
				}
				next = end
			}
			if next != maxP {
				t.Fatalf("maxP=%d p=%d ranges end at %d", maxP, p, next)
			}
		}
	}
}

func TestHashesAreStable(t *testing.T) {
	// Key groups are stored in checkpoints: these values must never change.
	cases := []struct {
		name string
		got  uint64
		want uint64
	}{
		{"string", HashString("pipegen"), 0x9389ca574ee40c87},
		{"uint64", HashUint64(42), 0x810879608e4259cc},
		{"combine", HashCombine(1, 2), 0xdaa66d2c7ddf743e},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: hash %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

func TestKeyGroupSpread(t *testing.T) {
	const maxP = 128
	counts := make([]int, maxP)
	for i := 0; i < 128000; i++ {
		counts[Of(HashUint64(uint64(i)), maxP)]++
	}
	for kg, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("key group %d got %d of 128000 keys, want about 1000", kg, c)
		}
	}
}
