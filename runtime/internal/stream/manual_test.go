package stream

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// manualJob is a testJob that a test driver runs (Manual).
type manualJob struct {
	*testJob
	m *Manual
}

func (j manualJob) Manual() *Manual { return j.m }

// recorder collects what a receiver got, as strings.
func recorder[T any](in *Inbox[T], got *[]string) func(Msg[T]) bool {
	return func(m Msg[T]) bool {
		switch m.Kind {
		case Records:
			*got = append(*got, fmt.Sprint(m.From, m.Recs))
		case Barrier:
			*got = append(*got, fmt.Sprint("barrier ", m.Checkpoint))
			in.Release(m.Checkpoint)
		case Watermark:
			*got = append(*got, fmt.Sprint("watermark ", m.Time))
		case Tick:
			*got = append(*got, "tick")
		case End:
			*got = append(*got, "end")
			return false
		}
		return true
	}
}

// TestManualDirect: under a driver, an inbox of two senders and a node of
// two subtasks run direct all the same: each event reaches its receiver
// inside the call of the sender that completed it, the barrier once both
// senders sent it (and neither is held back after), the watermark at the
// senders' minimum, the end after both ended; and ticks come from Tick
// only, never from the clock.
func TestManualDirect(t *testing.T) {
	m := NewManual()
	j := manualJob{newTestJob(true), m}
	ins := NewInboxes[int](j, 2, 2)
	got := make([][]string, 2)
	for i, in := range ins {
		in.Ticks()
		if !in.Direct(recorder(in, &got[i])) {
			t.Fatalf("inbox %d of two senders and two receivers did not run direct under a driver", i)
		}
	}
	a, b := NewOut(j, ins, 0), NewOut(j, ins, 1)
	a.Send(0, 1)
	a.Flush()
	if want := []string{"0 [1]"}; !slices.Equal(got[0], want) {
		t.Fatalf("after sender 0's flush, receiver 0 got %q, want %q", got[0], want)
	}
	a.Barrier(7)
	if len(got[0]) != 1 {
		t.Fatalf("the barrier came from one sender of two, and receiver 0 got %q", got[0])
	}
	b.Send(0, 2)
	b.Barrier(7)
	a.Watermark(10)
	b.Watermark(20)
	a.Send(1, 3) // released by the alignment: does not block
	a.Flush()
	time.Sleep(2 * Linger) // no tick comes from the clock
	m.Tick()
	a.End()
	b.End()
	want0 := []string{"0 [1]", "1 [2]", "barrier 7", "watermark 10", "tick", "end"}
	want1 := []string{"barrier 7", "watermark 10", "0 [3]", "tick", "end"}
	if !slices.Equal(got[0], want0) {
		t.Errorf("receiver 0 got\n%q\nwant\n%q", got[0], want0)
	}
	if !slices.Equal(got[1], want1) {
		t.Errorf("receiver 1 got\n%q\nwant\n%q", got[1], want1)
	}
}

// TestManualPair: under a driver a join's two inboxes run direct; the
// pair hands out a barrier once both sides aligned it, the lower
// watermark, a tick, and the end once both sides ended. Without a driver
// Pair.Direct refuses unless both senders run in one goroutine.
func TestManualPair(t *testing.T) {
	if p := NewPair(NewInboxes[int](newTestJob(true), 1, 1)[0], NewInboxes[string](newTestJob(true), 1, 1)[0]); p.Direct(func(PairMsg[int, string]) bool { return true }, false) {
		t.Error("a pair ran direct without a driver")
	}
	m := NewManual()
	j := manualJob{newTestJob(true), m}
	left, right := NewInboxes[int](j, 1, 1), NewInboxes[string](j, 1, 1)
	p := NewPair(left[0], right[0])
	p.Ticks()
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
		case Tick:
			got = append(got, "tick")
		case End:
			got = append(got, "end")
		}
		return true
	}, false) {
		t.Fatal("a pair did not run direct under a driver")
	}
	l, r := NewOut(j, left, 0), NewOut(j, right, 0)
	l.Forward(1)
	l.Barrier(3)
	r.Forward("x")
	r.Barrier(3)
	l.Watermark(5)
	r.Watermark(9)
	m.Tick()
	l.Forward(2) // released: does not block
	l.End()
	r.End()
	want := []string{"0 [1] []", "1 [] [x]", "barrier 3", "watermark 5", "tick", "0 [2] []", "watermark 9", "watermark 9223372036854775807", "end"}
	if !slices.Equal(got, want) {
		t.Errorf("the pair got\n%q\nwant\n%q", got, want)
	}
}
