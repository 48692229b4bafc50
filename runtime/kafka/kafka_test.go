package kafka

import (
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

type order struct {
	Customer string
	N        int64
}

// TestByRef: a key function that takes its record by pointer keys the
// sink's records (values) as the same function by value would.
func TestByRef(t *testing.T) {
	byPtr := func(o *order) string { return o.Customer }
	key := KeyBytes(ByRef(byPtr))
	if got := string(key(order{Customer: "ann", N: 3})); got != "ann" {
		t.Errorf("key = %q, want ann", got)
	}
	n := KeyInt(ByRef(func(o *order) int64 { return o.N }))
	if got := string(n(order{N: -42})); got != "-42" {
		t.Errorf("key = %q, want -42", got)
	}
}
