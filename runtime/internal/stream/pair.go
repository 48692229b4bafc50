package stream

import (
	"time"

	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// Pair reads a join's two inboxes, of different record types, as one
// stream of events. Each inbox aligns its own senders; Pair hands out a
// barrier once both have aligned it (an input whose senders all ended
// counts as aligned), a watermark when the lower of the two advances, and
// End when both have ended. While one side waits for the other's barrier
// its senders are held back by their gates, so reading on costs nothing.
type Pair[L, R any] struct {
	Left  *Inbox[L]
	Right *Inbox[R]

	barrier [2]int64 // the barrier each side has aligned, 0 for none
	ended   [2]bool
	wms     [2]int64
	wm      int64
	idle    func()
	done    <-chan struct{}
	ready   []PairMsg[L, R]
	wait    lastWait // how long the subtask last waited for a message
}

// PairMsg is an event of a Pair: records of one side (Side 0 for the left
// input, 1 for the right), or a control event of both.
type PairMsg[L, R any] struct {
	Kind  MsgKind
	Side  int
	Left  []L
	Right []R
	From  int32
	// Checkpoint is the checkpoint id of a barrier, Time the event time
	// of a watermark.
	Checkpoint int64
	Time       int64
}

// NewPair reads the inboxes left and right of one join subtask.
func NewPair[L, R any](left *Inbox[L], right *Inbox[R]) *Pair[L, R] {
	return &Pair[L, R]{Left: left, Right: right, wms: [2]int64{MinTime, MinTime}, wm: MinTime, done: left.stopped()}
}

// Bind sets the subtask's checkpoint task and idle function on both inboxes.
func (p *Pair[L, R]) Bind(t AlignmentRecorder, idle func()) {
	p.Left.Bind(t, idle)
	p.Right.Bind(t, idle)
	p.idle = idle
}

// Observe makes o see both inboxes (see Inbox.Observe).
func (p *Pair[L, R]) Observe(o Observer) {
	p.Left.Observe(o)
	p.Right.Observe(o)
}

// Ticks asks for a Tick every Linger.
func (p *Pair[L, R]) Ticks() { p.Left.Ticks() }

// Direct makes the receiver run in its senders' goroutines, as
// Inbox.Direct does: a message of either side goes through that side's
// inbox and then the pair's bookkeeping, and every event it completes is
// handed to handle at once. It does so in a job that a test driver runs
// (Manual), and when each side has one sender, the receiver has one
// subtask, and both senders run in one goroutine (oneGoroutine: generated
// code knows, from the chains that took Inbox.Direct, that both descend
// from one source subtask by direct calls). Then a barrier held by one
// side until the other's arrives holds nobody back: that goroutine passes
// a checkpoint's barrier on to all its outputs before anything else, so
// the other side's comes before the first sender sends again. Otherwise
// it reports false and the receiver reads Next in a goroutine of its own,
// woken for every batch of either side.
func (p *Pair[L, R]) Direct(handle func(PairMsg[L, R]) bool, oneGoroutine bool) bool {
	if p.Left.manual == nil && !(oneGoroutine && p.Left.senders == 1 && p.Left.peers == 1 && p.Right.senders == 1 && p.Right.peers == 1) {
		return false
	}
	drain := func() {
		for len(p.ready) > 0 {
			m := p.ready[0]
			p.ready = p.ready[1:]
			handle(m)
		}
	}
	p.Left.direct = func(m Msg[L]) bool {
		p.left(m)
		drain()
		return true
	}
	p.Right.direct = func(m Msg[R]) bool {
		p.right(m)
		drain()
		return true
	}
	return true
}

// Next returns the next event.
func (p *Pair[L, R]) Next() PairMsg[L, R] {
	for {
		if len(p.ready) > 0 {
			m := p.ready[0]
			p.ready = p.ready[1:]
			return m
		}
		if m, ok := p.Left.pending(); ok {
			p.left(m)
			continue
		}
		if m, ok := p.Right.pending(); ok {
			p.right(m)
			continue
		}
		select {
		case m := <-p.Left.channel():
			p.leftMsg(m)
			continue
		case m := <-p.Right.channel():
			p.rightMsg(m)
			continue
		default:
		}
		p.idle()
		start := time.Now()
		p.Left.obs.Waiting(start, false)
		if p.wait.short() && spin(start, func() bool {
			select {
			case m := <-p.Left.channel():
				p.waited(start)
				p.leftMsg(m)
				return true
			case m := <-p.Right.channel():
				p.waited(start)
				p.rightMsg(m)
				return true
			default:
				return false
			}
		}) {
			continue
		}
		select {
		case m := <-p.Left.channel():
			p.waited(start)
			p.leftMsg(m)
		case m := <-p.Right.channel():
			p.waited(start)
			p.rightMsg(m)
		case <-p.Left.ticker():
			p.waited(start)
			return PairMsg[L, R]{Kind: Tick}
		case <-p.done:
			fault.Abort(fault.ErrCanceled)
		}
	}
}

// waited ends a wait that began at start.
func (p *Pair[L, R]) waited(start time.Time) { p.Left.obs.Idle(p.wait.ended(start)) }

func (p *Pair[L, R]) leftMsg(m Msg[L]) {
	if ev, ok := p.Left.handle(m); ok {
		p.left(ev)
	}
}

func (p *Pair[L, R]) rightMsg(m Msg[R]) {
	if ev, ok := p.Right.handle(m); ok {
		p.right(ev)
	}
}

func (p *Pair[L, R]) left(m Msg[L]) {
	if m.Kind == Records {
		p.ready = append(p.ready, PairMsg[L, R]{Kind: Records, Side: 0, Left: m.Recs, From: m.From})
		return
	}
	p.control(0, m.Kind, m.Checkpoint, m.Time)
}

func (p *Pair[L, R]) right(m Msg[R]) {
	if m.Kind == Records {
		p.ready = append(p.ready, PairMsg[L, R]{Kind: Records, Side: 1, Right: m.Recs, From: m.From})
		return
	}
	p.control(1, m.Kind, m.Checkpoint, m.Time)
}

// control combines one side's control event with the other side's state.
func (p *Pair[L, R]) control(side int, kind MsgKind, checkpoint, time int64) {
	other := 1 - side
	switch kind {
	case Barrier:
		p.barrier[side] = checkpoint
		if p.barrier[other] == checkpoint || p.ended[other] {
			p.ready = append(p.ready, PairMsg[L, R]{Kind: Barrier, Checkpoint: checkpoint})
		}
	case Watermark:
		p.wms[side] = time
		p.advance()
	case End:
		p.ended[side] = true
		p.wms[side] = MaxTime
		// A barrier the other side aligned waits for this one no more.
		if b := p.barrier[other]; b != 0 && p.barrier[side] != b {
			p.ready = append(p.ready, PairMsg[L, R]{Kind: Barrier, Checkpoint: b})
		}
		p.advance()
		if p.ended[other] {
			p.ready = append(p.ready, PairMsg[L, R]{Kind: End})
		}
	case Tick:
		p.ready = append(p.ready, PairMsg[L, R]{Kind: Tick})
	}
}

func (p *Pair[L, R]) advance() {
	if wm := min(p.wms[0], p.wms[1]); wm > p.wm {
		p.wm = wm
		p.ready = append(p.ready, PairMsg[L, R]{Kind: Watermark, Time: wm})
	}
}

// Release lets the senders of both sides go on after barrier id.
func (p *Pair[L, R]) Release(id int64) {
	p.Left.Release(id)
	p.Right.Release(id)
	p.barrier = [2]int64{}
}

// Watermark is the lower of the two sides' watermarks.
func (p *Pair[L, R]) Watermark() int64 { return p.wm }

// Watermarks returns every sender's watermark of both sides, for a
// checkpoint: the left side's first.
func (p *Pair[L, R]) Watermarks() []int64 {
	return append(p.Left.Watermarks(), p.Right.Watermarks()...)
}

// RestoreWatermarks sets both sides' senders' watermarks from a checkpoint.
func (p *Pair[L, R]) RestoreWatermarks(wms []int64) {
	n := p.Left.SenderCount()
	if len(wms) != n+p.Right.SenderCount() {
		if len(wms) > 0 {
			low := wms[0]
			for _, w := range wms {
				low = min(low, w)
			}
			p.Left.RestoreWatermarks([]int64{low})
			p.Right.RestoreWatermarks([]int64{low})
			p.wms = [2]int64{low, low}
			p.wm = low
		}
		return
	}
	p.Left.RestoreWatermarks(wms[:n])
	p.Right.RestoreWatermarks(wms[n:])
	p.wms = [2]int64{p.Left.Watermark(), p.Right.Watermark()}
	p.wm = min(p.wms[0], p.wms[1])
}
