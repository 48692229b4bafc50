package stream

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestDirect: an inbox with one sender at parallelism 1 hands its events
// to the receiver inside the sender's calls, in order, with barriers
// aligned and released, watermarks, the end, flushes and ticks; one with
// two senders or two receivers refuses.
func TestDirect(t *testing.T) {
	j := newTestJob(true)
	if NewInboxes[int](j, 1, 2)[0].Direct(func(Msg[int]) bool { return true }) {
		t.Error("an inbox of two senders ran direct")
	}
	if NewInboxes[int](j, 2, 1)[0].Direct(func(Msg[int]) bool { return true }) {
		t.Error("an inbox of a node with two subtasks ran direct")
	}
	ins := NewInboxes[int](j, 1, 1)
	in := ins[0]
	in.Ticks()
	var got []string
	flushes := 0
	in.Bind(nil, func() { flushes++ })
	if !in.Direct(func(m Msg[int]) bool {
		switch m.Kind {
		case Records:
			got = append(got, fmt.Sprint(m.Recs))
			in.Recycle(m.Recs)
		case Barrier:
			got = append(got, fmt.Sprint("barrier ", m.Checkpoint))
			in.Release(m.Checkpoint)
		case Watermark:
			got = append(got, fmt.Sprint("watermark ", m.Time))
		case Tick:
			got = append(got, "tick")
		case End:
			got = append(got, "end")
			return false
		}
		return true
	}) {
		t.Fatal("an inbox of one sender at parallelism 1 did not run direct")
	}
	out := NewOut(j, ins, 0)
	for i := range BatchSize + 2 {
		out.Forward(i)
	}
	if len(got) != 1 || flushes != 0 {
		t.Fatalf("after a full batch and two records: %v, %d flushes; want the full batch delivered", got, flushes)
	}
	out.Barrier(1)
	out.Forward(-1) // the sender is released at once: this does not block
	out.Watermark(5)
	time.Sleep(2 * Linger) // a tick is due
	out.Flush()
	out.End()
	want := []string{fmt.Sprint(seq(BatchSize)), "[1024 1025]", "barrier 1", "[-1]", "watermark 5", "tick", "end"}
	if !slices.Equal(got, want) {
		t.Errorf("the receiver got\n%q\nwant\n%q", got, want)
	}
	if flushes != 1 {
		t.Errorf("the receiver flushed %d times, want once, with its sender", flushes)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// counter is an Observer that counts the records received.
type counter struct {
	nobody
	n int
}

func (c *counter) Received(n int) { c.n += n }

// TestCalls: the only sender of a Direct inbox whose receiver offered a
// function of one record calls it for every record (as generated code
// does when ByCall says so), with the control events still in order
// between them; the metrics learn of the records at the next control
// event or flush. An inbox that does not run Direct, or runs so under a
// test driver, keeps the batches.
func TestCalls(t *testing.T) {
	j := newTestJob(true)
	ins := NewInboxes[int](j, 1, 2)
	ins[0].Calls()
	ins[0].Direct(func(Msg[int]) bool { return true })
	if ins[0].ByCall() {
		t.Error("an inbox of two senders took its records by a call")
	}
	ins = NewInboxes[int](j, 1, 1)
	ins[0].Calls()
	if ins[0].ByCall() {
		t.Error("an inbox took its records by a call before it ran Direct")
	}
	driven := NewInboxes[int](manualJob{j, NewManual()}, 1, 1)
	driven[0].Calls()
	driven[0].Direct(func(Msg[int]) bool { return true })
	if driven[0].ByCall() {
		t.Error("an inbox under a test driver took its records by a call")
	}
	plain := NewInboxes[int](j, 1, 1)
	plain[0].Direct(func(Msg[int]) bool { return true })
	if plain[0].ByCall() {
		t.Error("an inbox whose receiver offered no call took its records by one")
	}

	in := ins[0]
	seen := &counter{}
	in.Observe(seen)
	var got []string
	in.Calls()
	call := func(r int) {
		in.Took()
		got = append(got, fmt.Sprint(r))
	}
	in.Direct(func(m Msg[int]) bool {
		switch m.Kind {
		case Records:
			got = append(got, fmt.Sprint(m.Recs))
		case Barrier:
			got = append(got, fmt.Sprint("barrier ", m.Checkpoint))
			in.Release(m.Checkpoint)
		case Watermark:
			got = append(got, fmt.Sprint("watermark ", m.Time, " after ", seen.n))
		case End:
			got = append(got, "end")
			return false
		}
		return true
	})
	out := NewOut(j, ins, 0)
	if !in.ByCall() {
		t.Fatal("the only sender of a Direct inbox did not get to call its receiver")
	}
	call(1)
	call(2)
	out.Watermark(5)
	out.Barrier(1)
	call(3)
	out.Barrier(2) // the release of barrier 1 was taken: this does not block
	call(4)
	out.Flush()
	if seen.n != 4 {
		t.Errorf("the metrics learnt of %d records after a flush, want 4", seen.n)
	}
	out.End()
	want := []string{"1", "2", "watermark 5 after 2", "barrier 1", "3", "barrier 2", "4", "end"}
	if !slices.Equal(got, want) {
		t.Errorf("the receiver got\n%q\nwant\n%q", got, want)
	}
}

// TestPairOneGoroutine: a join whose two senders run in one goroutine at
// parallelism 1 runs in it too, in exactly-once mode: the barrier one side
// aligned waits for the other's without holding its sender, whose next
// send comes after both; with two senders on a side it refuses.
func TestPairOneGoroutine(t *testing.T) {
	j := newTestJob(true)
	if p := NewPair(NewInboxes[int](j, 1, 2)[0], NewInboxes[string](j, 1, 1)[0]); p.Direct(func(PairMsg[int, string]) bool { return true }, true) {
		t.Error("a pair with two senders on its left ran direct")
	}
	left, right := NewInboxes[int](j, 1, 1), NewInboxes[string](j, 1, 1)
	p := NewPair(left[0], right[0])
	var got []string
	if !p.Direct(func(e PairMsg[int, string]) bool {
		switch e.Kind {
		case Records:
			got = append(got, fmt.Sprint(e.Side, e.Left, e.Right))
		case Barrier:
			got = append(got, fmt.Sprint("barrier ", e.Checkpoint))
			p.Release(e.Checkpoint)
		case Watermark:
			got = append(got, fmt.Sprint("watermark ", e.Time))
		case End:
			got = append(got, "end")
		}
		return true
	}, true) {
		t.Fatal("a pair of one sender a side in one goroutine did not run direct")
	}
	l, r := NewOut(j, left, 0), NewOut(j, right, 0)
	l.Forward(1)
	l.Barrier(3)
	r.Forward("x")
	r.Barrier(3)
	l.Forward(2) // released by the pair's barrier: this does not block
	l.Watermark(5)
	r.Watermark(9)
	l.Barrier(4)
	r.Barrier(4)
	r.Forward("y") // in a batch until the end
	l.End()
	r.End()
	want := []string{"0 [1] []", "1 [] [x]", "barrier 3", "0 [2] []", "watermark 5", "barrier 4", "watermark 9", "1 [] [y]", fmt.Sprint("watermark ", MaxTime), "end"}
	if !slices.Equal(got, want) {
		t.Errorf("the join got\n%q\nwant\n%q", got, want)
	}
}
