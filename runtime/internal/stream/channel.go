package stream

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/invariants"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
)

// Env is what the data plane needs of the job it runs in.
type Env interface {
	// Done is closed when the job stops: a blocked send or receive gives
	// up.
	Done() <-chan struct{}
	// Aligned reports whether barriers are aligned (exactly-once).
	Aligned() bool
	// MaxParallelism is the number of key groups, which Hash routes by.
	MaxParallelism() int
	// LingerFlag registers a flag that the job sets every Linger.
	LingerFlag() *atomic.Bool
}

// AlignmentRecorder learns how long each barrier took to align in an
// inbox: a subtask's checkpoint task, for the checkpoint's statistics.
type AlignmentRecorder interface {
	Aligned(d time.Duration)
}

// Observer learns what a subtask's inboxes and outputs see, for the
// metrics: batches received, and the time spent waiting, which the data
// plane measures only when it has to wait (never per record).
type Observer interface {
	// Received counts a batch of n records taken from an inbox.
	Received(n int)
	// Waiting says that the subtask waits, since start, for input or
	// (backpressured) for room downstream, so that a long wait counts
	// as it goes, not only once it ends: the next Idle or Backpressured
	// ends it.
	Waiting(start time.Time, backpressured bool)
	// Idle adds time spent waiting for input.
	Idle(d time.Duration)
	// Backpressured adds time spent waiting for room downstream (a full
	// inbox, or a receiver aligning a barrier).
	Backpressured(d time.Duration)
	// Inbox adds a way to see how full an inbox is.
	Inbox(fill func() (n, capacity int))
}

// nobody is the Observer of a subtask nobody watches.
type nobody struct{}

func (nobody) Received(int)                   {}
func (nobody) Waiting(time.Time, bool)        {}
func (nobody) Idle(time.Duration)             {}
func (nobody) Backpressured(time.Duration)    {}
func (nobody) Inbox(func() (n, capacity int)) {}

// BatchSize is the number of records a sender collects for one receiver
// before it hands them over: one channel operation per batch instead of
// per record. A partial batch is handed over when the sender has nothing
// else to do, and before every control event. 1024 rather than 256 costs
// 3-7% less CPU on examples/nexmark's q5 and q7 (fewer hand-offs and
// wake-ups of the receiver).
const BatchSize = 1024

// Linger is the longest a record waits in a partial batch while its
// subtask is busy: every Linger, each subtask hands its partial batches on
// (an idle subtask does so at once).
const Linger = 20 * time.Millisecond

// spinFor is how long a receiver whose inbox is empty keeps looking for a
// message before it parks, if its last wait was short (spinWhile): a
// receiver that parks is woken by the sender's next message, and Go
// runs the woken goroutine on the sender's processor, so that the two
// take turns on one CPU while the other idles, and every wake-up of the
// parked thread is a system call. At parallelism 2, Nexmark q5's two
// CPUs were busy 1.88 of 2 (/proc/stat over a run) and 1.93-1.96 with a
// spin of 5-100 µs; paired runs of 20M events, this spin over none: q5
// at p=2 0.966 of the wall and 1.004 of the CPU, q4 0.974 and 0.979, q3
// and q7 0.989-0.999 of both, q5 and q4 at p=1 0.987-0.997; a spin of
// 200 µs cost q5 4% more CPU for no wall time (docs/runtime.md,
// Batching; examples/nexmark/README.md, the eleventh session's entry).
const spinFor = 20 * time.Microsecond

// spinWhile is the longest last wait after which a receiver spins
// (spinFor) before it parks: longer waits mean slow input, where a spin
// would find nothing and cost up to spinFor of CPU a message. It is
// Linger, not less: spinning only after waits under 1 ms lost the gain
// (q5 at p=2 1.003 of the wall), likely because a wait over 1 ms (a
// receiver that ran ahead of its senders) is often followed by short
// ones; the waits' lengths were not measured.
const spinWhile = Linger

// lastWait is how long a receiver last waited for a message.
type lastWait time.Duration

// short reports whether the last wait was short enough to spin.
func (w lastWait) short() bool { return time.Duration(w) < spinWhile }

// ended records a wait that began at start and ends now, and returns its
// length.
func (w *lastWait) ended(start time.Time) time.Duration {
	d := time.Since(start)
	*w = lastWait(d)
	return d
}

// spin calls look until it finds a message or spinFor has passed since
// start, yielding the processor between looks so that a sender that
// waits for it (one on the same processor, with GOMAXPROCS goroutines
// busy) runs meanwhile; it reports whether look found one.
func spin(start time.Time, look func() bool) bool {
	for {
		runtime.Gosched()
		if look() {
			return true
		}
		if time.Since(start) >= spinFor {
			return false
		}
	}
}

// inboxDepth is the number of messages an inbox holds before its senders
// block: the bound on memory between two subtasks, and what turns a slow
// consumer into backpressure.
const inboxDepth = 16

// MsgKind tells records from control events.
type MsgKind uint8

// The message kinds.
const (
	// Records carries a batch of records.
	Records MsgKind = iota
	// Barrier is the barrier of checkpoint Checkpoint.
	Barrier
	// Watermark says that no record with an event time at or before Time
	// follows.
	Watermark
	// End is the end of input: nothing follows.
	End
	// Idle says that the sender has no records for a while: the watermark
	// goes on without it until it sends again.
	Idle
	// Tick is handed out by an inbox that asked for ticks (processing-time
	// windows and timers) every Linger.
	Tick
)

// Msg is what travels between subtasks: a batch of records or a control
// event.
type Msg[T any] struct {
	Recs []T
	// Checkpoint is the checkpoint id of a barrier.
	Checkpoint int64
	// Time is the event time of a watermark.
	Time int64
	From int32 // the sender, numbered within the receiving inbox
	Kind MsgKind
}

// Inbox is the receiving side of one subtask: one channel shared by all the
// subtasks that send to it (of one or several upstream nodes), and the
// bookkeeping that turns their control events into one stream of events.
//
// Barrier alignment: a sender that has sent barrier n to an inbox sends it
// nothing more until the inbox releases n, which it does once barrier n has
// come from every sender and the receiver has taken its snapshot. Records
// after the barrier therefore wait upstream (backpressure), not in a buffer,
// and the receiver never has to stop reading its single channel. In
// at-least-once mode senders do not wait: nothing blocks, and the records
// that overtake a barrier are counted in the snapshot and replayed after a
// restore.
//
// The bookkeeping of control events is inboxControl's: it does not depend
// on the record type, and Go compiles a generic type's methods again in
// every program, for each record type.
type Inbox[T any] struct {
	c    chan Msg[T]
	free chan []T
	// direct, when set, is the receiver's handler: a sender hands each
	// message to it in its own goroutine (see Direct).
	direct func(Msg[T]) bool
	inboxControl
}

// inboxControl is an Inbox without its record type.
type inboxControl struct {
	// release[s] wakes sender s after an alignment.
	release []chan struct{}
	done    <-chan struct{}
	idle    func()
	task    AlignmentRecorder
	obs     Observer
	// alignStart is when the barrier being aligned first arrived.
	alignStart time.Time
	// linger is set every Linger by the job: flush partial batches.
	linger *atomic.Bool
	// ticks makes the inbox hand out a Tick every Linger; tick wakes an
	// inbox that waits for records.
	ticks bool
	tick  <-chan time.Time
	// wms are the senders' watermarks; wm is their minimum over the
	// senders that are not idle, as last handed out.
	wms        []int64
	idleSender []bool
	wm         int64
	// aligned is true in exactly-once mode.
	aligned bool
	senders int
	// peers is the number of inboxes of the receiving node.
	peers int
	// call is set when the receiver takes records from its only sender
	// by a call instead of in batches: offered by Calls, taken up by
	// Direct. took counts those records until the metrics learn of them.
	call, offered bool
	took          int
	// manual is set when a test driver runs the job (see Manual).
	manual *Manual

	// The receiver's bookkeeping, touched only by the receiving goroutine.
	barrier  int64 // the barrier being aligned, 0 when none
	arrived  []bool
	nArrived int
	ended    []bool
	nEnded   int
	ready    []event  // events completed by one message, handed out in order
	wait     lastWait // how long the receiver last waited for a message
}

// event is a control event: a Msg without records.
type event struct {
	Checkpoint int64
	Time       int64
	From       int32
	Kind       MsgKind
}

// NewInboxes makes the inboxes of a node's subtasks, each fed by senders
// upstream subtasks.
func NewInboxes[T any](j Env, receivers, senders int) []*Inbox[T] {
	ins := make([]*Inbox[T], receivers)
	for i := range ins {
		in := &Inbox[T]{
			c:    make(chan Msg[T], inboxDepth),
			free: make(chan []T, inboxDepth+senders+1),
		}
		in.inboxControl.init(j, receivers, senders)
		ins[i] = in
	}
	return ins
}

// init prepares the bookkeeping of one of receivers inboxes, fed by
// senders upstream subtasks.
func (in *inboxControl) init(j Env, receivers, senders int) {
	*in = inboxControl{
		release: make([]chan struct{}, senders),
		done:    j.Done(),
		idle:    func() {},
		obs:     nobody{},
		aligned: j.Aligned(),
		senders: senders,
		peers:   receivers,
		arrived: make([]bool, senders),
		ended:   make([]bool, senders),
		wms:     make([]int64, senders),
		wm:      MinTime,

		idleSender: make([]bool, senders),
	}
	for s := range in.wms {
		in.wms[s] = MinTime
	}
	for s := range in.release {
		in.release[s] = make(chan struct{}, 1)
	}
	in.linger = j.LingerFlag()
	in.manual = manualOf(j)
}

// OnIdle sets what the receiver does when its inbox is empty, before it
// blocks: flush its own partial batches downstream, so that records never
// sit in a half-full batch while the pipeline is quiet.
func (in *inboxControl) OnIdle(flush func()) { in.idle = flush }

// Bind sets the receiving subtask's checkpoint task, which learns how long
// each barrier took to align, and its idle function (see OnIdle).
func (in *inboxControl) Bind(t AlignmentRecorder, idle func()) {
	in.task = t
	in.idle = idle
}

// Direct makes the receiver run in its sender's goroutine, if the inbox
// allows it: one sender, which is the receiving node's only one (both
// sides at parallelism 1 and one input). A receiver that asked for ticks
// gets them from the sender's flushes (and every Linger while records
// flow), so its sender must flush at least every Linger, as a source's
// chain does: generated code asks for Direct then only behind a source.
// A send then goes
// through the inbox's bookkeeping (alignment, watermarks, the end) and
// hands every event that completes to handle at once, as Next would have
// returned it, instead of through the channel; handle returns false at
// the end of input. The receiver's goroutine is not needed: Direct
// reports whether the inbox took this path. What the receiver does then
// runs in the sender's goroutine, as if fused: no batch waits in a
// channel, no goroutine is woken; the records cross in batches, keyed and
// aligned as over the channel, or one by one by a call when the receiver
// offered one (Calls).
//
// In a job that a test driver runs (Manual), every inbox takes this path,
// whatever its senders and peers.
func (in *Inbox[T]) Direct(handle func(Msg[T]) bool) bool {
	if in.manual == nil && (in.senders != 1 || in.peers != 1) {
		return false
	}
	in.direct = handle
	in.call = in.manual == nil && in.offered
	return true
}

// Calls offers the receiver's function of one record to its sender: when
// the inbox runs Direct in a job that runs by itself (one sender at
// parallelism 1), the sender passes each record to that function by a
// call (ByCall) rather than writing it into a batch that the receiver
// reads back a moment later, in the same goroutine. Nothing else
// changes: the control events still go through the inbox's bookkeeping,
// after the records before them, as batches would have delivered them.
// The function must count each record (Took). Under a test driver
// (Manual), where several senders may share a Direct inbox, records keep
// going in batches. Call it before Direct, which takes the offer up.
//
// The function itself is not handed over: generated code calls the
// receiving chain's method statically, so that a record can go by
// reference without escaping to the heap, which a call through a
// function value would make it do.
func (in *inboxControl) Calls() { in.offered = true }

// ByCall reports whether the receiver takes its only sender's records by
// a call (see Calls): the inbox runs Direct and its receiver offered a
// function of one record. It does not change once the job runs.
func (in *inboxControl) ByCall() bool { return in.call }

// Took counts a record that the receiver's function of Calls got; the
// metrics learn of it with the next control event or flush.
func (in *inboxControl) Took() { in.took++ }

// received tells the metrics of the records taken by calls.
func (in *inboxControl) received() {
	if in.took > 0 {
		in.obs.Received(in.took)
		in.took = 0
	}
}

// push takes message m from the sender of a Direct inbox.
func (in *Inbox[T]) push(m Msg[T]) {
	in.received()
	if r, ok := in.handle(m); ok {
		in.direct(r)
	}
	for {
		r, ok := in.pending()
		if !ok {
			return
		}
		in.direct(r)
	}
}

// Observe makes o see the inbox's batches, how long its receiver waits for
// them, and how full it is.
func (in *Inbox[T]) Observe(o Observer) {
	in.obs = o
	o.Inbox(func() (int, int) { return len(in.c), cap(in.c) })
}

// Next returns the next batch of records, or a control event that holds for
// all senders: a barrier once it has come from every sender that has not
// ended (aligned), a watermark when the minimum over the senders'
// watermarks advances, End once every sender has ended, and Tick every
// Linger when the receiver asked for ticks.
func (in *Inbox[T]) Next() Msg[T] {
	for {
		if m, ok := in.pending(); ok {
			return m
		}
		var m Msg[T]
		select {
		case m = <-in.c:
		default:
			in.idle()
			start := time.Now()
			in.obs.Waiting(start, false)
			got := in.wait.short() && spin(start, func() bool {
				select {
				case m = <-in.c:
					return true
				default:
					return false
				}
			})
			tick := false
			if !got {
				select {
				case m = <-in.c:
				case <-in.tick:
					tick = true // nothing arrives, but processing time goes on
				case <-in.done:
					fault.Abort(fault.ErrCanceled)
				}
			}
			in.obs.Idle(in.wait.ended(start))
			if tick {
				return Msg[T]{Kind: Tick}
			}
		}
		if m, ok := in.handle(m); ok {
			return m
		}
	}
}

// pending returns an event that is ready without receiving: one completed
// by an earlier message, or a tick.
func (in *Inbox[T]) pending() (Msg[T], bool) {
	if len(in.ready) == 0 && !in.linger.Load() {
		return Msg[T]{}, false // most calls: nothing to hand out
	}
	e, ok := in.pendingEvent()
	return Msg[T]{Kind: e.Kind, Checkpoint: e.Checkpoint, Time: e.Time, From: e.From}, ok
}

// pendingEvent is pending without the record type.
func (in *inboxControl) pendingEvent() (event, bool) {
	if len(in.ready) > 0 {
		e := in.ready[0]
		in.ready = in.ready[1:]
		return e, true
	}
	if in.linger.Load() {
		in.linger.Store(false)
		in.idle()
		if in.ticks {
			return event{Kind: Tick}, true
		}
	}
	return event{}, false
}

// handle takes one message off the channel: records are handed out at
// once; control events update the bookkeeping and may complete an event.
func (in *Inbox[T]) handle(m Msg[T]) (Msg[T], bool) {
	if m.Kind == Records {
		if invariants.On {
			in.checkRecords(m.From)
		}
		if in.idleSender[m.From] {
			in.idleSender[m.From] = false
		}
		in.obs.Received(len(m.Recs))
		return m, true
	}
	in.control(event{Kind: m.Kind, Checkpoint: m.Checkpoint, Time: m.Time, From: m.From})
	return in.pending()
}

// control takes a control event off the channel: it updates the
// bookkeeping and may complete an event, which pending hands out.
func (in *inboxControl) control(m event) {
	switch m.Kind {
	case Barrier:
		in.arrive(m)
	case Watermark:
		in.idleSender[m.From] = false
		if m.Time > in.wms[m.From] {
			in.wms[m.From] = m.Time
			in.advance()
		}
	case Idle:
		in.idleSender[m.From] = true
		in.advance()
	case End:
		// A sender with event time sends the watermark MaxTime before it
		// ends (every window fires); End itself moves no watermark.
		in.end(m)
	}
	if invariants.On {
		in.check()
	}
}

// advance recomputes the watermark, the minimum over the senders that are
// not idle, and hands it out when it moved.
func (in *inboxControl) advance() {
	wm := MaxTime
	active := false
	for s, w := range in.wms {
		if in.idleSender[s] {
			continue
		}
		active = true
		wm = min(wm, w)
	}
	if !active {
		return // all idle: nothing is known
	}
	if wm > in.wm {
		in.wm = wm
		in.ready = append(in.ready, event{Kind: Watermark, Time: wm})
	}
}

// channel, ticker and stopped are what a Pair selects on besides its
// other inbox.
func (in *Inbox[T]) channel() <-chan Msg[T]   { return in.c }
func (in *Inbox[T]) ticker() <-chan time.Time { return in.tick }
func (in *Inbox[T]) stopped() <-chan struct{} { return in.done }

// SenderCount is the number of subtasks that send to the inbox.
func (in *inboxControl) SenderCount() int { return in.senders }

// Watermark is the receiver's watermark: the minimum over its senders.
func (in *inboxControl) Watermark() int64 { return in.wm }

// SenderWatermark is the watermark of one sender, against which the
// lateness of that sender's records is judged: every record of a sender
// comes after the watermarks it sent before it, whatever the other senders
// do, so the judgement is the same in every run.
func (in *inboxControl) SenderWatermark(from int32) int64 { return in.wms[from] }

// Ticks asks for a Tick event every Linger, also while nothing arrives.
// In a driven job (Manual) the driver hands them out instead, to the
// receiver's Direct handler.
func (in *Inbox[T]) Ticks() {
	in.ticks = true
	if in.manual != nil {
		in.manual.ticks = append(in.manual.ticks, func() { in.direct(Msg[T]{Kind: Tick}) })
		return
	}
	in.tick = time.NewTicker(Linger).C
}

// Watermarks returns every sender's watermark, for a checkpoint.
func (in *inboxControl) Watermarks() []int64 { return slices.Clone(in.wms) }

// RestoreWatermarks sets the senders' watermarks from a checkpoint. With
// another number of senders than when it was taken, every sender starts
// from the lowest of them.
func (in *inboxControl) RestoreWatermarks(wms []int64) {
	if len(wms) == 0 {
		return
	}
	if len(wms) != len(in.wms) {
		low := slices.Min(wms)
		wms = make([]int64, len(in.wms))
		for i := range wms {
			wms[i] = low
		}
	}
	copy(in.wms, wms)
	in.wm = slices.Min(in.wms)
}

func (in *inboxControl) arrive(m event) {
	switch {
	case m.Checkpoint < in.barrier:
		// A barrier of a checkpoint given up in favour of a newer one: let
		// its sender go on at once.
		in.releaseSender(int(m.From))
		return
	case m.Checkpoint > in.barrier:
		// A newer checkpoint supersedes one that never completed here.
		in.releaseAll()
		in.barrier = m.Checkpoint
		if in.task != nil {
			in.alignStart = time.Now()
		}
	}
	if !in.arrived[m.From] {
		in.arrived[m.From] = true
		in.nArrived++
	}
	in.checkAligned()
}

func (in *inboxControl) end(m event) {
	if in.ended[m.From] {
		return
	}
	in.ended[m.From] = true
	in.nEnded++
	// A sender that ended takes part in no later barrier: the barrier being
	// aligned may be complete now.
	in.checkAligned()
	if in.nEnded == in.senders {
		in.ready = append(in.ready, event{Kind: End})
	}
}

func (in *inboxControl) checkAligned() {
	if in.barrier == 0 || in.nArrived == 0 {
		return
	}
	// Every sender must have sent the barrier or ended. In at-least-once
	// mode nothing holds a sender back between its barrier and its end, so
	// one sender can have done both: count senders, not events. This runs
	// only on control events.
	for s := range in.senders {
		if !in.arrived[s] && !in.ended[s] {
			return
		}
	}
	in.ready = append(in.ready, event{Kind: Barrier, Checkpoint: in.barrier})
	if in.task != nil {
		in.task.Aligned(time.Since(in.alignStart))
	}
}

// Release lets the senders of barrier id go on. The receiver calls it after
// it has taken its snapshot and forwarded the barrier.
func (in *inboxControl) Release(id int64) {
	if id == in.barrier {
		in.releaseAll()
	}
}

func (in *inboxControl) releaseAll() {
	for s, ok := range in.arrived {
		if ok {
			in.arrived[s] = false
			in.releaseSender(s)
		}
	}
	in.nArrived = 0
}

func (in *inboxControl) releaseSender(s int) {
	if in.aligned {
		// Each sender waits for one release per barrier it sent, so the
		// buffered slot is always free here.
		in.release[s] <- struct{}{}
	}
}

// Recycle gives a batch back once its records are processed, for a sender
// to fill again.
func (in *Inbox[T]) Recycle(b []T) {
	select {
	case in.free <- b[:0]:
	default:
	}
}

func (in *Inbox[T]) batch() []T {
	select {
	case b := <-in.free:
		return b
	default:
		return make([]T, 0, BatchSize)
	}
}

// Out is the sending side of one subtask towards one downstream node: a
// batch per receiving subtask, and the routing of records to receivers.
type Out[T any] struct {
	to []*Inbox[T]
	// bufs are the batches being filled, one per receiver; their headers
	// are written at every record, and sit in an array of their own
	// between pads (see NewOut).
	bufs  [][]T
	gated []bool
	from  int32
	// route maps a key group to its receiver, for Hash.
	route []int32
	maxP  int
	// next is the receiver Rebalance fills, moving on after every batch.
	next int
	// fwd is the receiver of Forward.
	fwd  int
	done <-chan struct{}
	obs  Observer
}

// NewOut makes the output of the sender numbered from (within the inboxes'
// senders) towards the inboxes to.
func NewOut[T any](j Env, to []*Inbox[T], from int) *Out[T] {
	o := &Out[T]{
		to:    to,
		bufs:  padded[[]T](len(to)),
		gated: make([]bool, len(to)),
		from:  int32(from),
		fwd:   from % len(to),
		maxP:  j.MaxParallelism(),
		done:  j.Done(),
		obs:   nobody{},
	}
	for i := range o.bufs {
		o.bufs[i] = make([]T, 0, BatchSize)
	}
	o.route = make([]int32, o.maxP)
	for kg := range o.route {
		o.route[kg] = int32(keygroup.Owner(kg, o.maxP, len(to)))
	}
	return o
}

// padded makes a slice of n elements whose cache lines hold nothing else:
// it sits in a larger array, with at least a cache line (64 bytes) unused
// on each side. The Outs of a stage's subtasks are made one after the
// other, and their arrays of batch headers, small, would land side by side
// in memory, where the header one subtask writes at every record shares a
// cache line with the one another subtask writes on the other core (false
// sharing: both then run at a fraction of their speed).
func padded[E any](n int) []E {
	size := int(unsafe.Sizeof(*new(E)))
	pad := 1
	if size > 0 {
		pad = (64 + size - 1) / size
	}
	all := make([]E, pad+n+pad)
	return all[pad : pad+n : pad+n]
}

// Observe makes o learn how long the sender waits for its receivers.
func (o *Out[T]) Observe(obs Observer) { o.obs = obs }

// Send sends r to receiver i.
func (o *Out[T]) Send(i int, r T) {
	b := append(o.bufs[i], r)
	o.bufs[i] = b
	if len(b) == BatchSize {
		o.flushTo(i)
	}
}

// Forward sends r to the receiver of the same index as the sender (the
// parallelisms are equal) or, when --set made them differ, to a fixed one.
func (o *Out[T]) Forward(r T) {
	o.Send(o.fwd, r)
}

// Hash sends r to the receiver that owns the key group of a key whose hash
// is h.
func (o *Out[T]) Hash(h uint64, r T) {
	o.Send(int(o.route[keygroup.Of(h, o.maxP)]), r)
}

// HashSlot is Hash for a record that the caller writes in place: it
// returns the place, in the batch for the receiver that owns the key
// group of a key whose hash is h, that the next record takes, which the
// caller fills before it calls o again. Generated code sends so: a
// record passed to Hash by value is built in a temporary, copied into
// the call's arguments and again into the batch, and a copy of a record
// of more than a few fields just stored field by field, read back with
// wider loads, stalls (store forwarding: a quarter of q7's exchange at
// parallelism 2, perf annotate). A batch that is full is handed over at
// the next record for its receiver, or at the next flush or control
// event, since the last record is written only after HashSlot returns.
func (o *Out[T]) HashSlot(h uint64) *T {
	i := int(o.route[keygroup.Of(h, o.maxP)])
	b := o.bufs[i]
	if len(b) >= BatchSize {
		o.flushTo(i)
		b = o.bufs[i]
	}
	if len(b) < cap(b) {
		b = b[:len(b)+1]
	} else {
		var zero T
		b = append(b, zero)
	}
	o.bufs[i] = b
	return &b[len(b)-1]
}

// Rebalance spreads records over the receivers a batch at a time.
func (o *Out[T]) Rebalance(r T) {
	o.Send(o.next, r)
}

// Broadcast sends r to every receiver.
func (o *Out[T]) Broadcast(r T) {
	for i := range o.to {
		o.Send(i, r)
	}
}

// Flush hands over every partial batch. A receiver that runs in this
// sender's goroutine (Inbox.Direct) flushes its own output then too, as
// it would when idle.
func (o *Out[T]) Flush() {
	for i, in := range o.to {
		o.flushTo(i)
		if in.direct != nil {
			in.received()
			in.idle()
			if in.ticks {
				select {
				case <-in.tick:
					in.direct(Msg[T]{Kind: Tick})
				default:
				}
			}
		}
	}
}

// Barrier forwards checkpoint barrier id to every receiver, after the
// records before it. In exactly-once mode the receiver gets nothing more
// from this sender until it has aligned the barrier.
func (o *Out[T]) Barrier(id int64) {
	for i, in := range o.to {
		o.flushTo(i)
		o.send(i, Msg[T]{Kind: Barrier, Checkpoint: id, From: o.from})
		o.gated[i] = in.aligned
	}
}

// Watermark tells every receiver, after the records before it, that no
// record at or before time w follows from this sender.
func (o *Out[T]) Watermark(w int64) {
	for i := range o.to {
		o.flushTo(i)
		o.send(i, Msg[T]{Kind: Watermark, Time: w, From: o.from})
	}
}

// Idle tells every receiver that this sender has no records for a while,
// so that their watermarks need not wait for it.
func (o *Out[T]) Idle() {
	for i := range o.to {
		o.flushTo(i)
		o.send(i, Msg[T]{Kind: Idle, From: o.from})
	}
}

// End tells every receiver that this sender has no more records.
func (o *Out[T]) End() {
	for i := range o.to {
		o.flushTo(i)
		o.send(i, Msg[T]{Kind: End, From: o.from})
	}
}

// flushTo hands over receiver i's batch and takes the next one for
// writing, every slot of which it clears first when the batch handed
// over held a quarter of a batch or more and the receiver runs in a
// goroutine of its own (one that runs in this sender's, Inbox.Direct,
// reads the batch on this core).
//
// A recycled batch was last read on the receiver's core, which holds
// its cache lines: every record written into it is a store that must
// first take its line over from that core, and waits in the store
// buffer meanwhile; a load that the store buffer cannot serve (a copy
// of a record just built, wider than the stores that built it: Go's
// 16-byte moves over 8-byte fields) then waits for all of them, once
// per record (Nexmark q5 at parallelism 2: 91% of its source loop's
// samples on one such load of the bid, 14% of its CPU). Cleared at
// once, the batch's lines are taken over back to back, many at a time,
// before any record is built, and the records then go into lines this
// core holds. After a small batch (a flush while the input is slow)
// the next is not cleared: most of its slots may never be written; a
// quarter bounds the slots cleared to four times the records the last
// batch held. Paired runs of 10M events at p=2, CPU and wall new over
// old (9 pairs): q5 0.880 and 0.869, q4 0.907 and 0.904. Clearing only
// after a full batch gave q5 0.910 and 0.903 (q5 hands over many
// batches that are not full, most likely flushed before its frequent
// watermarks), clearing every batch taken q5 0.874 and 0.903, q3 0.99
// and 0.98, q7 and q8, where few records cross, 1.00
// (examples/nexmark/README.md, Parallelism 2, batches for the other
// core, has the commands).
func (o *Out[T]) flushTo(i int) {
	b := o.bufs[i]
	if len(b) == 0 {
		return
	}
	o.send(i, Msg[T]{Recs: b, From: o.from})
	next := o.to[i].batch()
	if len(b) >= BatchSize/4 && o.to[i].direct == nil {
		clear(next[:cap(next)])
	}
	o.bufs[i] = next
	if i == o.next {
		if o.next++; o.next == len(o.to) {
			o.next = 0
		}
	}
}

func (o *Out[T]) send(i int, m Msg[T]) {
	in := o.to[i]
	if o.gated[i] {
		select {
		case <-in.release[o.from]:
		default:
			// The receiver aligns a barrier: wait until it has.
			start := time.Now()
			o.obs.Waiting(start, true)
			select {
			case <-in.release[o.from]:
			case <-o.done:
				fault.Abort(fault.ErrCanceled)
			}
			o.obs.Backpressured(time.Since(start))
		}
		o.gated[i] = false
	}
	if in.direct != nil {
		in.push(m)
		return
	}
	select {
	case in.c <- m:
	default:
		// The receiver is behind: wait for it (backpressure).
		start := time.Now()
		o.obs.Waiting(start, true)
		select {
		case in.c <- m:
		case <-o.done:
			fault.Abort(fault.ErrCanceled)
		}
		o.obs.Backpressured(time.Since(start))
	}
}
