package intkey

import (
	"math"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

type id int64

func TestIs(t *testing.T) {
	for _, c := range []struct {
		got, want bool
		what      string
	}{
		{Is[int](), true, "int"},
		{Is[int64](), true, "int64"},
		{Is[uint64](), true, "uint64"},
		{Is[id](), true, "a named int64"},
		{Is[int32](), false, "int32"},
		{Is[string](), false, "string"},
		{Is[float64](), false, "float64"},
		{Is[[8]byte](), false, "[8]byte"},
		{Is[struct{ A int64 }](), false, "a struct of one int64"},
	} {
		if c.got != c.want {
			t.Errorf("Is[%s] = %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestOfTo(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 1000, math.MaxInt64, math.MinInt64} {
		if got := Of(id(v)); got != v {
			t.Errorf("Of(id(%d)) = %d", v, got)
		}
		if got := To[id](v); got != id(v) {
			t.Errorf("To[id](%d) = %d", v, got)
		}
	}
	if got := Of(uint64(math.MaxUint64)); got != -1 {
		t.Errorf("Of(MaxUint64) = %d, want -1 (its bits)", got)
	}
	if got := To[uint64](-1); got != math.MaxUint64 {
		t.Errorf("To[uint64](-1) = %d, want MaxUint64", got)
	}
}
