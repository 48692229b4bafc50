package eventtime

import "slices"

// Combiner is the sending side of a combined edge (Flink's local-global
// aggregation): a subtask that feeds a tumbling-window aggregate with a
// merge function over a hash edge keeps its own accumulator per key and
// window, folds its records into them, and sends one partial accumulator
// per key and window instead of every record; the receiving window merges
// the partials. It holds nothing across a checkpoint: the sender sends
// every partial (Drain) before it forwards a barrier, so a checkpoint never
// needs its accumulators, and before a watermark it sends the windows that
// the watermark closes (Advance), so that they arrive before it and are
// not late for the receiver.
//
// Lateness is judged as the receiver would judge the records: by the
// sender's own watermark, the last one it passed on, which is the one the
// receiver reads for the sender's records (Inbox.SenderWatermark).
type Combiner[K comparable, A any] struct {
	st *WindowState[K, A]
}

// NewCombiner returns an empty combiner for tumbling windows of assigner a
// (the receiver's windows, without allowed lateness).
func NewCombiner[K comparable, A any](a WindowAssigner) *Combiner[K, A] {
	if a.Kind != Tumbling {
		panic("a combiner takes tumbling windows")
	}
	return &Combiner[K, A]{st: NewWindowState[K, A](a, 0, nil)}
}

// Acc returns the accumulator of key k's window at time ts, for the caller
// to fold a record into; nil when the record is late by the watermark the
// combiner's sender passed on last (the receiver would drop it).
func (c *Combiner[K, A]) Acc(k K, ts int64) *A { return c.st.Acc(k, ts, MinTime) }

// Advance takes the sender's watermark wm before the sender passes it on:
// send gets the partial of every window that wm closes, which then leaves
// the combiner.
func (c *Combiner[K, A]) Advance(wm int64, send func(k K, w Window, acc *A)) {
	c.st.Advance(wm, send)
}

// Drain sends the partial of every open window, in ascending window start,
// and empties the combiner; the sender calls it before it forwards a
// barrier and at the end of its input. The accumulators handed to send
// are the combiner's no more: the sender may keep them, and what they
// point to, in what it sends.
func (c *Combiner[K, A]) Drain(send func(k K, w Window, acc *A)) {
	s := c.st
	if s.n == 0 {
		return
	}
	starts := make([]int64, 0, len(s.panes))
	for st := range s.panes {
		starts = append(starts, st)
	}
	slices.Sort(starts)
	for _, st := range starts {
		p := s.panes[st]
		for i := range p.keys {
			send(p.keys[i], p.w, &p.accs[i])
		}
	}
	wm := s.wm
	c.st = NewWindowState[K, A](s.assign, 0, nil)
	c.st.wm = wm
}

// Len is the number of partials the combiner holds.
func (c *Combiner[K, A]) Len() int { return c.st.n }
