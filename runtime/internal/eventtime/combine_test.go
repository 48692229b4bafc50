package eventtime

import (
	"cmp"
	"slices"
	"testing"
)

// TestCombiner folds records into partials per key and window, sends the
// windows a watermark closes at Advance and all the others at Drain,
// empties itself at Drain, and judges a record late by the last watermark
// it was given, as the receiver judges the sender's records.
func TestCombiner(t *testing.T) {
	c := NewCombiner[string, int](WindowAssigner{Kind: Tumbling, Size: 10})
	type sent struct {
		k     string
		start int64
		n     int
	}
	var got []sent
	send := func(k string, w Window, acc *int) { got = append(got, sent{k, w.Start, *acc}) }
	take := func() []sent {
		s := got
		got = nil
		slices.SortFunc(s, func(x, y sent) int { return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.k, y.k)) })
		return s
	}
	add := func(k string, ts int64) bool {
		acc := c.Acc(k, ts)
		if acc == nil {
			return false
		}
		*acc++
		return true
	}
	for _, r := range []struct {
		k  string
		ts int64
	}{{"a", 1}, {"b", 2}, {"a", 5}, {"a", 12}, {"b", 25}, {"a", 9}} {
		if !add(r.k, r.ts) {
			t.Fatalf("record %v late before any watermark", r)
		}
	}
	if c.Len() != 4 {
		t.Errorf("Len = %d, want 4 partials", c.Len())
	}
	c.Advance(9, send) // closes [0,10), whose MaxTimestamp is 9
	if s, want := take(), []sent{{"a", 0, 3}, {"b", 0, 1}}; !slices.Equal(s, want) {
		t.Errorf("Advance(9) sent %v, want %v", s, want)
	}
	if add("a", 3) {
		t.Error("a record at 3 after watermark 9 was taken: the receiver would drop it")
	}
	if !add("a", 10) {
		t.Error("a record at 10 after watermark 9 is not late")
	}
	c.Drain(send)
	if s, want := take(), []sent{{"a", 10, 2}, {"b", 20, 1}}; !slices.Equal(s, want) {
		t.Errorf("Drain sent %v, want %v", s, want)
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d after Drain, want 0", c.Len())
	}
	c.Drain(send)
	if len(got) > 0 {
		t.Errorf("a second Drain sent %v", got)
	}
	// The watermark survives the Drain: lateness is still judged by it.
	if add("b", 8) {
		t.Error("a record at 8 after watermark 9 and a Drain was taken")
	}
	if !add("b", 12) {
		t.Error("a record at 12 after a Drain is not late")
	}
	c.Drain(send)
	if s, want := take(), []sent{{"b", 10, 1}}; !slices.Equal(s, want) {
		t.Errorf("Drain sent %v, want %v (a fresh partial, not added to the one sent before)", s, want)
	}
}
