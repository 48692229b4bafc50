package stream

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
)

// hangGuard is how long a test waits for something that must happen before
// it calls it a hang. It is never the thing tested: no assertion depends on
// how fast a machine is.
const hangGuard = 10 * time.Second

// newRig wires senders outs to receivers inboxes, every sender to every
// receiver, the way generated code wires one edge.
func newRig[T any](mode string, senders, receivers int) (*testJob, []*Inbox[T], []*Out[T]) {
	j := newTestJob(mode == ExactlyOnce)
	ins := NewInboxes[T](j, receivers, senders)
	outs := make([]*Out[T], senders)
	for s := range outs {
		outs[s] = NewOut(j, ins, s)
	}
	return j, ins, outs
}

// waitFor polls cond until it holds; the deadline only guards against a
// hang.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("hang: still waiting for %s after %v\n%s", what, hangGuard, stacks())
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// recvWithin receives from c; the deadline only guards against a hang.
func recvWithin[T any](t testing.TB, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("hang: still waiting for %s after %v\n%s", what, hangGuard, stacks())
		panic("unreachable")
	}
}

// waitJob returns j.Wait(), failing the test if the job hangs.
func waitJob(t testing.TB, j *testJob) error {
	t.Helper()
	c := make(chan error, 1)
	go func() { c <- j.Wait() }()
	return recvWithin(t, "the job's goroutines to finish", c)
}

func stacks() string {
	buf := make([]byte, 1<<16)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// blockedIn counts the goroutines that are blocked on a channel operation
// with every one of funcs on their stack. It lets a test observe that a
// goroutine waits, without guessing how long waiting takes.
func blockedIn(funcs ...string) int {
	n := 0
	for _, g := range strings.Split(stacks(), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(header, "[select") && !strings.Contains(header, "[chan ") {
			continue
		}
		all := true
		for _, f := range funcs {
			all = all && strings.Contains(g, f)
		}
		if all {
			n++
		}
	}
	return n
}

// outSend is Out.send in a goroutine's stack.
const outSend = "stream.(*Out[...]).send("

// wouldBlock is the panic value with which poll's idle callback stops Next
// where it would block.
type wouldBlock struct{}

// poll returns the next event of in, or false where Next would block: it
// lets one goroutine play every sender and the receiver, in an exact order.
func poll[T any](in *Inbox[T]) (m Msg[T], ok bool) {
	in.OnIdle(func() { panic(wouldBlock{}) })
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(wouldBlock); !is {
				panic(r)
			}
			ok = false
		}
	}()
	return in.Next(), true
}

// events lists what in delivers until Next would block: "s0[1 2]" is a
// batch from sender 0, "B1" barrier 1, "E" the end of input.
func events(in *Inbox[int]) string {
	var evs []string
	for {
		m, ok := poll(in)
		if !ok {
			return strings.Join(evs, " ")
		}
		switch m.Kind {
		case Records:
			evs = append(evs, fmt.Sprintf("s%d%v", m.From, m.Recs))
		case Barrier:
			evs = append(evs, fmt.Sprintf("B%d", m.Checkpoint))
		case End:
			evs = append(evs, "E")
		default:
			evs = append(evs, fmt.Sprintf("kind%d", m.Kind))
		}
	}
}

// mayGo reports whether o's next message to receiver i goes without
// waiting for a barrier's release.
func mayGo[T any](o *Out[T], i int) bool {
	return !o.gated[i] || len(o.to[i].release[o.from]) > 0
}

// tagged is a record that knows where it comes from.
type tagged struct{ S, Seq int }

// receiverLog is what one receiving subtask saw, in order.
type receiverLog struct {
	mu      sync.Mutex
	recs    []tagged
	batches []int
	// barriers[k] is the barrier id of the kth barrier, delivered after
	// recs[:barrierAt[k]].
	barriers  []int64
	barrierAt []int
	ends      int
}

func (l *receiverLog) add(m Msg[tagged]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch m.Kind {
	case Records:
		l.recs = append(l.recs, m.Recs...)
		l.batches = append(l.batches, len(m.Recs))
	case Barrier:
		l.barriers = append(l.barriers, m.Checkpoint)
		l.barrierAt = append(l.barrierAt, len(l.recs))
	case End:
		l.ends++
	}
}

// count returns how many records from sender s with a sequence number of
// at least from the receiver has seen.
func (l *receiverLog) count(s, from int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.recs {
		if r.S == s && r.Seq >= from {
			n++
		}
	}
	return n
}

// receive runs the loop of a receiving subtask the way generated code
// does, logging what it sees; atBarrier runs before the barrier is
// released.
func receive(in *Inbox[tagged], l *receiverLog, atBarrier func(id int64)) {
	for {
		m := in.Next()
		l.add(m)
		switch m.Kind {
		case Records:
			in.Recycle(m.Recs)
		case Barrier:
			if atBarrier != nil {
				atBarrier(m.Checkpoint)
			}
			in.Release(m.Checkpoint)
		case End:
			return
		}
	}
}

// checkDelivery checks that every one of n records of every sender arrived
// exactly once, at the receiver route chose, in the order its sender sent
// them, in batches of at most BatchSize, followed by one End.
func checkDelivery(t *testing.T, logs []*receiverLog, senders, n int, route func(tagged) int) {
	t.Helper()
	seen := make([][]int, senders)
	for s := range seen {
		seen[s] = make([]int, n)
	}
	for r, l := range logs {
		if l.ends != 1 {
			t.Errorf("receiver %d: End delivered %d times, want once", r, l.ends)
		}
		for _, b := range l.batches {
			if b < 1 || b > BatchSize {
				t.Errorf("receiver %d: a batch of %d records, want 1 to %d", r, b, BatchSize)
			}
		}
		last := make([]int, senders)
		for s := range last {
			last[s] = -1
		}
		for _, rec := range l.recs {
			if rec.S < 0 || rec.S >= senders || rec.Seq < 0 || rec.Seq >= n {
				t.Fatalf("receiver %d: record %+v was never sent", r, rec)
			}
			seen[rec.S][rec.Seq]++
			if want := route(rec); want != r {
				t.Errorf("record %+v went to receiver %d, want %d", rec, r, want)
			}
			if rec.Seq <= last[rec.S] {
				t.Errorf("receiver %d: record %d of sender %d after record %d: out of order", r, rec.Seq, rec.S, last[rec.S])
			}
			last[rec.S] = rec.Seq
		}
	}
	for s := range seen {
		for seq, k := range seen[s] {
			if k != 1 {
				t.Errorf("record %d of sender %d arrived %d times, want once", seq, s, k)
			}
		}
	}
}

// TestInboxDeliversEveryRecordOnceInOrder sends by Hash from two
// senders and by HashSlot from the other two.
func TestInboxDeliversEveryRecordOnceInOrder(t *testing.T) {
	const senders, receivers, n = 4, 3, 5000
	j, ins, outs := newRig[tagged](ExactlyOnce, senders, receivers)
	key := func(r tagged) uint64 { return keygroup.HashUint64(uint64(r.S)<<32 | uint64(r.Seq)) }
	route := func(r tagged) int { return keygroup.Owner(keygroup.Of(key(r), 128), 128, receivers) }
	for s := range senders {
		j.Go("sender", s, func() {
			for seq := range n {
				r := tagged{s, seq}
				if s%2 == 0 {
					outs[s].Hash(key(r), r)
				} else {
					*outs[s].HashSlot(key(r)) = r
				}
				if seq%1000 == 999 {
					outs[s].Flush() // partial batches too
				}
			}
			outs[s].End()
		})
	}
	logs := make([]*receiverLog, receivers)
	for r := range receivers {
		logs[r] = new(receiverLog)
		j.Go("receiver", r, func() { receive(ins[r], logs[r], nil) })
	}
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	checkDelivery(t, logs, senders, n, route)
	for r, l := range logs {
		if len(l.recs) == 0 {
			t.Errorf("receiver %d got no records: hash routing does not spread keys", r)
		}
	}
}

func TestOutRebalanceSpreadsOverAllReceivers(t *testing.T) {
	const receivers, rounds = 3, 4
	j, ins, outs := newRig[tagged](ExactlyOnce, 1, receivers)
	n := receivers * rounds * BatchSize
	j.Go("sender", 0, func() {
		for seq := range n {
			outs[0].Rebalance(tagged{0, seq})
		}
		outs[0].End()
	})
	logs := make([]*receiverLog, receivers)
	for r := range receivers {
		logs[r] = new(receiverLog)
		j.Go("receiver", r, func() { receive(ins[r], logs[r], nil) })
	}
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	// Full batches go round robin: every receiver gets the same share.
	checkDelivery(t, logs, 1, n, func(r tagged) int { return r.Seq / BatchSize % receivers })
	for r, l := range logs {
		if len(l.recs) != rounds*BatchSize {
			t.Errorf("receiver %d got %d records, want %d", r, len(l.recs), rounds*BatchSize)
		}
	}
}

func TestOutRebalanceMovesOnAfterPartialBatch(t *testing.T) {
	j, ins, outs := newRig[int](ExactlyOnce, 1, 2)
	_ = j
	o := outs[0]
	o.Rebalance(1)
	o.Flush()
	o.Rebalance(2)
	o.Flush()
	o.Rebalance(3)
	o.Flush()
	if got, want := events(ins[0]), "s0[1] s0[3]"; got != want {
		t.Errorf("receiver 0 got %q, want %q", got, want)
	}
	if got, want := events(ins[1]), "s0[2]"; got != want {
		t.Errorf("receiver 1 got %q, want %q", got, want)
	}
}

func TestOutBroadcastReachesAll(t *testing.T) {
	const senders, receivers, n = 2, 3, 1000
	j, ins, outs := newRig[tagged](ExactlyOnce, senders, receivers)
	for s := range senders {
		j.Go("sender", s, func() {
			for seq := range n {
				outs[s].Broadcast(tagged{s, seq})
			}
			outs[s].End()
		})
	}
	logs := make([]*receiverLog, receivers)
	for r := range receivers {
		logs[r] = new(receiverLog)
		j.Go("receiver", r, func() { receive(ins[r], logs[r], nil) })
	}
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	for r, l := range logs {
		// Each receiver on its own sees every record once, in order.
		checkDelivery(t, []*receiverLog{l}, senders, n, func(tagged) int { return 0 })
		if len(l.recs) != senders*n {
			t.Errorf("receiver %d got %d records, want %d", r, len(l.recs), senders*n)
		}
	}
}

func TestOutSendBatches(t *testing.T) {
	_, ins, outs := newRig[int](ExactlyOnce, 1, 1)
	for i := range BatchSize + 1 {
		outs[0].Send(0, i)
	}
	m, ok := poll(ins[0])
	if !ok || m.Kind != Records || len(m.Recs) != BatchSize || m.Recs[0] != 0 || m.Recs[BatchSize-1] != BatchSize-1 {
		t.Fatalf("after %d records the inbox holds %v (ok %v), want one full batch of %d", BatchSize+1, m, ok, BatchSize)
	}
	if m, ok := poll(ins[0]); ok {
		t.Fatalf("the record after a full batch was handed over before a flush: %v", m)
	}
	outs[0].Flush()
	if got, want := events(ins[0]), fmt.Sprintf("s0[%d]", BatchSize); got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}
	outs[0].Flush() // nothing to flush: no empty batch
	if got := events(ins[0]); got != "" {
		t.Errorf("Flush of an empty batch handed over %q", got)
	}
}

// TestOutHashSlotBatches: a full batch goes at the next record for its
// receiver (its last record is written after HashSlot returns), into a
// recycled batch whose old records the new ones overwrite.
func TestOutHashSlotBatches(t *testing.T) {
	_, ins, outs := newRig[int](ExactlyOnce, 1, 1)
	for i := range BatchSize {
		*outs[0].HashSlot(uint64(i)) = i
	}
	if m, ok := poll(ins[0]); ok {
		t.Fatalf("a batch was handed over before its last record could be written: %v", m)
	}
	*outs[0].HashSlot(0) = BatchSize
	m, ok := poll(ins[0])
	if !ok || m.Kind != Records || len(m.Recs) != BatchSize || m.Recs[0] != 0 || m.Recs[BatchSize-1] != BatchSize-1 {
		t.Fatalf("after %d records the inbox holds %v (ok %v), want one full batch of %d", BatchSize+1, m, ok, BatchSize)
	}
	ins[0].Recycle(m.Recs)
	outs[0].Flush()
	m, _ = poll(ins[0])
	if len(m.Recs) != 1 || m.Recs[0] != BatchSize {
		t.Fatalf("after Flush: %v, want the one record %d", m.Recs, BatchSize)
	}
	*outs[0].HashSlot(7) = -1 // into the recycled batch
	outs[0].Flush()
	if m, _ = poll(ins[0]); len(m.Recs) != 1 || m.Recs[0] != -1 {
		t.Fatalf("a record written into a recycled batch: %v, want [-1]", m.Recs)
	}
}

func TestInboxRecycledBatchesAreReused(t *testing.T) {
	_, ins, outs := newRig[int](ExactlyOnce, 1, 1)
	for i := range BatchSize {
		outs[0].Send(0, i)
	}
	m, _ := poll(ins[0])
	ins[0].Recycle(m.Recs)
	for i := range BatchSize {
		outs[0].Send(0, 1000+i)
	}
	m2, _ := poll(ins[0])
	if len(m2.Recs) != BatchSize || m2.Recs[0] != 1000 {
		t.Fatalf("second batch %v", m2.Recs[:1])
	}
	// The third batch is filled in the recycled one.
	for i := range BatchSize {
		outs[0].Send(0, 2000+i)
	}
	m3, _ := poll(ins[0])
	if &m3.Recs[0] != &m.Recs[0] {
		t.Errorf("a recycled batch was not reused")
	}
	if m3.Recs[0] != 2000 || len(m3.Recs) != BatchSize {
		t.Errorf("third batch starts with %d and has %d records", m3.Recs[0], len(m3.Recs))
	}
}

func TestInboxOnIdle(t *testing.T) {
	j, ins, outs := newRig[int](ExactlyOnce, 1, 1)
	in := ins[0]

	// Records waiting: Next does not call the idle callback.
	outs[0].Send(0, 1)
	outs[0].Flush()
	in.OnIdle(func() { t.Error("idle callback called while a batch was waiting") })
	if m := in.Next(); m.Kind != Records || !slices.Equal(m.Recs, []int{1}) {
		t.Fatalf("Next = %v, want the batch [1]", m)
	}

	// Empty inbox: Next calls it before it blocks, and then takes what comes.
	idle := make(chan struct{}, 100)
	in.OnIdle(func() { idle <- struct{}{} })
	got := make(chan Msg[int], 1)
	j.Go("receiver", 0, func() { got <- in.Next() })
	recvWithin(t, "the idle callback", idle)
	select {
	case m := <-got:
		t.Fatalf("Next returned %v from an empty inbox", m)
	default:
	}
	outs[0].Send(0, 2)
	outs[0].Flush()
	if m := recvWithin(t, "Next", got); m.Kind != Records || !slices.Equal(m.Recs, []int{2}) {
		t.Fatalf("Next = %v, want the batch [2]", m)
	}
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	if n := len(idle); n != 0 {
		t.Errorf("idle callback called %d more times, want once per wait", n)
	}
}

// TestAlignmentSteps plays senders and receiver in one goroutine, so that
// messages arrive in an exact order.
func TestAlignmentSteps(t *testing.T) {
	type step struct {
		do   func(o []*Out[int], in *Inbox[int])
		want string // events delivered after do
		// gated lists the senders that must wait for a release now.
		gated []int
	}
	send := func(s int, recs ...int) func(o []*Out[int], in *Inbox[int]) {
		return func(o []*Out[int], _ *Inbox[int]) {
			for _, r := range recs {
				o[s].Send(0, r)
			}
			o[s].Flush()
		}
	}
	barrier := func(s int, id int64) func(o []*Out[int], in *Inbox[int]) {
		return func(o []*Out[int], _ *Inbox[int]) { o[s].Barrier(id) }
	}
	end := func(s int) func(o []*Out[int], in *Inbox[int]) {
		return func(o []*Out[int], _ *Inbox[int]) { o[s].End() }
	}
	release := func(id int64) func(o []*Out[int], in *Inbox[int]) {
		return func(_ []*Out[int], in *Inbox[int]) { in.Release(id) }
	}
	cases := []struct {
		name    string
		mode    string
		senders int
		steps   []step
	}{
		{
			name: "aligned", mode: ExactlyOnce, senders: 3,
			steps: []step{
				{do: send(0, 1, 2), want: "s0[1 2]"},
				{do: barrier(0, 1), want: "", gated: []int{0}},
				{do: send(1, 10), want: "s1[10]", gated: []int{0}},
				{do: barrier(1, 1), want: "", gated: []int{0, 1}},
				{do: send(2, 20), want: "s2[20]", gated: []int{0, 1}},
				{do: barrier(2, 1), want: "B1", gated: []int{0, 1, 2}},
				{do: release(1), want: ""},
				{do: send(2, 21), want: "s2[21]"},
				{do: end(0), want: ""},
				{do: end(1), want: ""},
				{do: end(2), want: "E"},
				{do: end(2), want: ""}, // End only once
			},
		},
		{
			name: "sender ended before the barrier", mode: ExactlyOnce, senders: 3,
			steps: []step{
				{do: end(2), want: ""},
				{do: barrier(0, 1), want: "", gated: []int{0}},
				{do: barrier(1, 1), want: "B1", gated: []int{0, 1}},
				{do: release(1), want: ""},
				{do: end(0), want: ""},
				{do: end(1), want: "E"},
			},
		},
		{
			name: "end completes the alignment", mode: ExactlyOnce, senders: 3,
			steps: []step{
				{do: barrier(0, 1), want: "", gated: []int{0}},
				{do: barrier(1, 1), want: "", gated: []int{0, 1}},
				{do: send(2, 7), want: "s2[7]", gated: []int{0, 1}},
				{do: end(2), want: "B1", gated: []int{0, 1}},
				{do: release(1), want: ""},
				{do: send(0, 3), want: "s0[3]"},
				{do: end(0), want: ""},
				{do: end(1), want: "E"},
			},
		},
		{
			name: "last senders end together", mode: ExactlyOnce, senders: 3,
			steps: []step{
				{do: barrier(0, 1), want: "", gated: []int{0}},
				{do: end(1), want: "", gated: []int{0}},
				{do: end(2), want: "B1", gated: []int{0}},
				{do: release(1), want: ""},
				{do: end(0), want: "E"},
			},
		},
		{
			name: "newer barrier supersedes", mode: ExactlyOnce, senders: 3,
			steps: []step{
				{do: barrier(0, 1), want: "", gated: []int{0}},
				{do: barrier(1, 2), want: "", gated: []int{1}}, // 0 may go on
				{do: send(0, 5), want: "s0[5]", gated: []int{1}},
				{do: barrier(0, 2), want: "", gated: []int{0, 1}},
				{do: release(1), want: "", gated: []int{0, 1}}, // not the barrier being aligned
				{do: barrier(2, 2), want: "B2", gated: []int{0, 1, 2}},
				{do: release(2), want: ""},
				{do: end(0), want: ""},
				{do: end(1), want: ""},
				{do: end(2), want: "E"},
			},
		},
		{
			name: "stale barrier", mode: ExactlyOnce, senders: 3,
			steps: []step{
				{do: barrier(0, 2), want: "", gated: []int{0}},
				{do: barrier(1, 1), want: "", gated: []int{0}}, // released at once
				{do: send(1, 4), want: "s1[4]", gated: []int{0}},
				{do: barrier(1, 2), want: "", gated: []int{0, 1}},
				{do: barrier(2, 2), want: "B2", gated: []int{0, 1, 2}},
				{do: release(2), want: ""},
				{do: end(0), want: ""},
				{do: end(1), want: ""},
				{do: end(2), want: "E"},
			},
		},
		{
			name: "two checkpoints", mode: ExactlyOnce, senders: 2,
			steps: []step{
				{do: barrier(0, 1), want: "", gated: []int{0}},
				{do: barrier(1, 1), want: "B1", gated: []int{0, 1}},
				{do: release(1), want: ""},
				{do: barrier(1, 2), want: "", gated: []int{1}},
				{do: send(0, 8), want: "s0[8]", gated: []int{1}},
				{do: barrier(0, 2), want: "B2", gated: []int{0, 1}},
				{do: release(2), want: ""},
				{do: end(0), want: ""},
				{do: end(1), want: "E"},
			},
		},
		{
			name: "no barrier", mode: ExactlyOnce, senders: 2,
			steps: []step{
				{do: send(0, 1), want: "s0[1]"},
				{do: end(0), want: ""},
				{do: end(1), want: "E"},
			},
		},
		{
			name: "at-least-once does not gate", mode: AtLeastOnce, senders: 2,
			steps: []step{
				{do: barrier(0, 1), want: ""},
				{do: send(0, 1), want: "s0[1]"}, // overtakes the barrier
				{do: barrier(1, 1), want: "B1"},
				{do: release(1), want: ""},
				{do: end(0), want: ""},
				{do: end(1), want: "E"},
			},
		},
		{
			// A sender that nothing holds back sends its barrier and then
			// ends: it counts once, not as both aligned and ended.
			name: "at-least-once sender ends after its barrier", mode: AtLeastOnce, senders: 2,
			steps: []step{
				{do: barrier(0, 1), want: ""},
				{do: send(0, 4), want: "s0[4]"},
				{do: end(0), want: ""},
				{do: send(1, 9), want: "s1[9]"},
				{do: barrier(1, 1), want: "B1"},
				{do: release(1), want: ""},
				{do: end(1), want: "E"},
			},
		},
		{
			name: "at-least-once barrier completed by an end", mode: AtLeastOnce, senders: 3,
			steps: []step{
				{do: barrier(0, 1), want: ""},
				{do: end(0), want: ""},
				{do: barrier(1, 1), want: ""},
				{do: end(2), want: "B1"},
				{do: release(1), want: ""},
				{do: end(1), want: "E"},
			},
		},
		{
			name: "at-least-once all end after the barrier", mode: AtLeastOnce, senders: 2,
			steps: []step{
				{do: barrier(0, 1), want: ""},
				{do: end(0), want: ""},
				{do: end(1), want: "B1 E"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ins, outs := newRig[int](tc.mode, tc.senders, 1)
			for k, st := range tc.steps {
				st.do(outs, ins[0])
				if got := events(ins[0]); got != st.want {
					t.Fatalf("step %d: delivered %q, want %q", k+1, got, st.want)
				}
				for s, o := range outs {
					if want := slices.Contains(st.gated, s); mayGo(o, 0) == want {
						if want {
							t.Fatalf("step %d: sender %d may send on, want it held until the barrier's release", k+1, s)
						}
						t.Fatalf("step %d: sender %d is held, want it free to send", k+1, s)
					}
				}
			}
		})
	}
}

// TestBarrierAlignmentExactlyOnce runs 3 senders and 2 receivers in their
// own goroutines. Each sender sends barrier 1 at its own point; every
// receiver must see it exactly once, after every record sent before it and
// before every record sent after it, and the senders must wait for the
// receivers' release.
func TestBarrierAlignmentExactlyOnce(t *testing.T) {
	const senders, receivers, n = 3, 2, 1500
	barrierAt := []int{120, 517, 1}
	j, ins, outs := newRig[tagged](ExactlyOnce, senders, receivers)
	route := func(r tagged) int { return r.Seq % receivers }

	passed := make([]chan struct{}, senders)
	for s := range senders {
		passed[s] = make(chan struct{})
		j.Go("sender", s, func() {
			o := outs[s]
			for seq := range n {
				if seq == barrierAt[s] {
					o.Barrier(1)
				}
				if seq == barrierAt[s]+receivers {
					// One record after the barrier is buffered for each
					// receiver: this flush passes once both released it.
					o.Flush()
					close(passed[s])
				}
				o.Send(route(tagged{s, seq}), tagged{s, seq})
			}
			o.End()
		})
	}
	logs := make([]*receiverLog, receivers)
	aligned := make([]chan struct{}, receivers)
	goAhead := make([]chan struct{}, receivers)
	for r := range receivers {
		logs[r] = new(receiverLog)
		aligned[r] = make(chan struct{})
		goAhead[r] = make(chan struct{})
		j.Go("receiver", r, func() {
			receive(ins[r], logs[r], func(id int64) {
				if id != 1 || len(logs[r].barriers) != 1 {
					return // reported below
				}
				close(aligned[r])
				select {
				case <-goAhead[r]:
				case <-j.Context().Done():
					fault.Abort(fault.ErrCanceled)
				}
			})
		})
	}
	t.Cleanup(func() { j.Fail(errors.New("test over")) })

	anyPassed := func() bool {
		for s := range senders {
			select {
			case <-passed[s]:
				t.Errorf("sender %d sent records after barrier 1 before the receivers released it", s)
				return true
			default:
			}
		}
		return false
	}
	for r := range receivers {
		recvWithin(t, fmt.Sprintf("barrier 1 at receiver %d", r), aligned[r])
	}
	waitFor(t, "the senders to wait at the barrier", func() bool {
		return anyPassed() || blockedIn(outSend, "TestBarrierAlignmentExactlyOnce") == senders
	})
	if t.Failed() {
		t.FailNow()
	}

	// Receiver 0 releases: every sender hands it its record after the
	// barrier, and then waits for receiver 1.
	close(goAhead[0])
	for s := range senders {
		waitFor(t, fmt.Sprintf("receiver 0 to get sender %d's record after the barrier", s), func() bool {
			return logs[0].count(s, barrierAt[s]) > 0
		})
	}
	waitFor(t, "the senders to wait for receiver 1", func() bool {
		return anyPassed() || blockedIn(outSend, "TestBarrierAlignmentExactlyOnce") == senders
	})
	if t.Failed() {
		t.FailNow()
	}
	for s := range senders {
		if got := logs[1].count(s, barrierAt[s]); got != 0 {
			t.Errorf("receiver 1 got %d records of sender %d after the barrier before it released it", got, s)
		}
	}

	close(goAhead[1])
	for s := range senders {
		recvWithin(t, fmt.Sprintf("sender %d to pass the barrier", s), passed[s])
	}
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	checkDelivery(t, logs, senders, n, route)
	for r, l := range logs {
		checkBarrier(t, r, l, barrierAt, true)
	}
}

// checkBarrier checks that receiver r saw barrier 1 once, after every
// record sent before it, and, when exact, before every record sent after
// it.
func checkBarrier(t *testing.T, r int, l *receiverLog, barrierAt []int, exact bool) {
	t.Helper()
	if !slices.Equal(l.barriers, []int64{1}) {
		t.Errorf("receiver %d got barriers %v, want [1]", r, l.barriers)
		return
	}
	at := l.barrierAt[0]
	for _, rec := range l.recs[at:] {
		if rec.Seq < barrierAt[rec.S] {
			t.Errorf("receiver %d: record %d of sender %d (before its barrier at %d) arrived after the aligned barrier", r, rec.Seq, rec.S, barrierAt[rec.S])
		}
	}
	if !exact {
		return
	}
	for _, rec := range l.recs[:at] {
		if rec.Seq >= barrierAt[rec.S] {
			t.Errorf("receiver %d: record %d of sender %d (after its barrier at %d) arrived before the aligned barrier", r, rec.Seq, rec.S, barrierAt[rec.S])
		}
	}
}

// TestBarrierAtLeastOnce: nothing waits for the barrier, so records sent
// after it overtake it, and it is still delivered once every sender sent
// it.
func TestBarrierAtLeastOnce(t *testing.T) {
	const senders, receivers, n = 3, 2, 1500
	barrierAt := []int{100, 300, 500}
	j, ins, outs := newRig[tagged](AtLeastOnce, senders, receivers)
	route := func(r tagged) int { return r.Seq % receivers }

	// Sender 2 holds its barrier back until every receiver has seen
	// records that sender 0 sent after its own: with aligned barriers that
	// would never happen.
	hold := make(chan struct{})
	for s := range senders {
		j.Go("sender", s, func() {
			o := outs[s]
			for seq := range n {
				if seq == barrierAt[s] {
					if s == 2 {
						select {
						case <-hold:
						case <-j.Context().Done():
							fault.Abort(fault.ErrCanceled)
						}
					}
					o.Barrier(1)
				}
				if s == 0 && seq == barrierAt[s]+receivers {
					o.Flush()
				}
				o.Send(route(tagged{s, seq}), tagged{s, seq})
			}
			o.End()
		})
	}
	logs := make([]*receiverLog, receivers)
	for r := range receivers {
		logs[r] = new(receiverLog)
		j.Go("receiver", r, func() { receive(ins[r], logs[r], nil) })
	}
	t.Cleanup(func() { j.Fail(errors.New("test over")) })

	for r := range receivers {
		waitFor(t, fmt.Sprintf("receiver %d to get records sent after the barrier", r), func() bool {
			return logs[r].count(0, barrierAt[0]) > 0
		})
		logs[r].mu.Lock()
		if len(logs[r].barriers) != 0 {
			t.Errorf("receiver %d got barrier %v before sender 2 sent it", r, logs[r].barriers)
		}
		logs[r].mu.Unlock()
	}
	close(hold)
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	checkDelivery(t, logs, senders, n, route)
	for r, l := range logs {
		checkBarrier(t, r, l, barrierAt, false)
		// Sender 0's records after the barrier came before it.
		overtook := 0
		for _, rec := range l.recs[:l.barrierAt[0]] {
			if rec.Seq >= barrierAt[rec.S] {
				overtook++
			}
		}
		if overtook == 0 {
			t.Errorf("receiver %d: no record overtook the barrier", r)
		}
	}
}

// TestBackpressure: a receiver that does not read holds its sender back
// after a bounded number of records.
func TestBackpressure(t *testing.T) {
	const bound = (inboxDepth + 1) * BatchSize
	j, ins, outs := newRig[int](ExactlyOnce, 1, 1)
	_ = j
	total := 4 * bound
	progress := make(chan int, total)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range total {
			outs[0].Send(0, i)
			progress <- i + 1
		}
		outs[0].End()
	}()
	waitFor(t, "the sender to block", func() bool { return blockedIn(outSend, "TestBackpressure") == 1 })
	sent := 0
	for len(progress) > 0 {
		sent = <-progress
	}
	if sent > bound {
		t.Errorf("the sender sent %d records to a receiver that reads none; want at most (inboxDepth+1)*BatchSize = %d", sent, bound)
	}
	if sent < inboxDepth*BatchSize {
		t.Errorf("the sender blocked after %d records; the inbox holds %d batches of %d", sent, inboxDepth, BatchSize)
	}

	// Reading lets it go on; everything arrives.
	next := 0
	for {
		m := ins[0].Next()
		if m.Kind == End {
			break
		}
		for _, r := range m.Recs {
			if r != next {
				t.Fatalf("record %d arrived where %d was expected", r, next)
			}
			next++
		}
		ins[0].Recycle(m.Recs)
	}
	if next != total {
		t.Errorf("%d records arrived, want %d", next, total)
	}
	recvWithin(t, "the sender to finish", done)
}

// TestCancelUnblocks: when the job fails, a sender blocked on a full inbox,
// a sender held at a barrier and a receiver blocked in Next all stop.
func TestCancelUnblocks(t *testing.T) {
	j := newTestJob(true)
	full := NewInboxes[int](j, 1, 1)
	empty := NewInboxes[int](j, 1, 1)
	gate := NewInboxes[int](j, 1, 1)
	fullOut := NewOut(j, full, 0)
	gateOut := NewOut(j, gate, 0)
	_ = NewOut(j, empty, 0) // sends nothing

	progress := make(chan int, 1<<16)
	j.Go("sender", 0, func() {
		for i := 0; ; i++ {
			fullOut.Send(0, i)
			select {
			case progress <- i:
			default:
			}
		}
	})
	idle := make(chan struct{}, 1)
	empty[0].OnIdle(func() {
		select {
		case idle <- struct{}{}:
		default:
		}
	})
	j.Go("receiver", 0, func() {
		m := empty[0].Next()
		t.Errorf("Next returned %v from an inbox nobody sends to", m)
	})
	j.Go("gated", 0, func() {
		gateOut.Barrier(1)
		gateOut.Send(0, 1)
		gateOut.Flush()
		t.Error("a sender went past a barrier nobody released")
	})

	recvWithin(t, "the receiver to go idle", idle)
	waitFor(t, "both senders to block", func() bool { return blockedIn(outSend, "TestCancelUnblocks") == 2 })
	boom := errors.New("boom")
	j.Fail(boom)
	if err := waitJob(t, j); err != boom {
		t.Fatalf("Wait = %v, want the failure %v", err, boom)
	}
}

// TestTaskFailureStopsOthers: one subtask aborts; the others, blocked on
// channels, stop, and the job reports the failure with its subtask.
func TestTaskFailureStopsOthers(t *testing.T) {
	j, ins, outs := newRig[int](ExactlyOnce, 1, 1)
	j.Go("source", 0, func() {
		for i := 0; ; i++ {
			outs[0].Send(0, i)
		}
	})
	j.Go("counts", 0, func() {
		for {
			m := ins[0].Next()
			for _, r := range m.Recs {
				if r == 1000 {
					fault.Abortf("bad record %d", r)
				}
			}
			ins[0].Recycle(m.Recs)
		}
	})
	err := waitJob(t, j)
	if err == nil || err.Error() != "counts[0]: bad record 1000" {
		t.Fatalf("Wait = %v, want counts[0]: bad record 1000", err)
	}
}

func BenchmarkOutInbox(b *testing.B) {
	for _, senders := range []int{1, 2} {
		b.Run(fmt.Sprintf("senders=%d", senders), func(b *testing.B) {
			_, ins, outs := newRig[int64](ExactlyOnce, senders, 1)
			in := ins[0]
			b.ResetTimer()
			for s := range senders {
				n := b.N / senders
				if s == 0 {
					n += b.N % senders
				}
				go func() {
					o := outs[s]
					for i := range n {
						o.Send(0, int64(i))
					}
					o.End()
				}()
			}
			var got int
			var sum int64
			for {
				m := in.Next()
				if m.Kind == End {
					break
				}
				for _, r := range m.Recs {
					sum += r
				}
				got += len(m.Recs)
				in.Recycle(m.Recs)
			}
			b.StopTimer()
			if got != b.N {
				b.Fatalf("%d records arrived, want %d", got, b.N)
			}
			b.ReportMetric(float64(got)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// waits records the waits an Observer is told of.
type waits struct {
	nobody
	mu           sync.Mutex
	began, ended int
	idle         time.Duration
}

func (w *waits) Waiting(time.Time, bool) { w.mu.Lock(); w.began++; w.mu.Unlock() }
func (w *waits) Idle(d time.Duration)    { w.mu.Lock(); w.ended++; w.idle += d; w.mu.Unlock() }

// TestWaitSpin: a receiver that finds its inbox empty reports one wait,
// begun and ended, whether the message came while it spun (spinFor) or
// after it parked, and it spins only after a short wait: a wait longer
// than spinWhile (slow input) makes the next one park at once. The same
// holds for a Pair.
func TestWaitSpin(t *testing.T) {
	// check runs three waits: each record is sent once the receiver has
	// found its input empty (empty), at once or after a pause.
	check := func(t *testing.T, next func() int, send func(int), empty chan struct{}, wait *lastWait, w *waits) {
		t.Helper()
		for i, pause := range []time.Duration{0, 2 * spinWhile, 0} {
			got := make(chan int, 1)
			go func() { got <- next() }()
			recvWithin(t, "the receiver to find its input empty", empty)
			time.Sleep(pause)
			send(i)
			if r := recvWithin(t, "Next", got); r != i {
				t.Fatalf("wait %d: Next gave record %d", i, r)
			}
			w.mu.Lock()
			began, ended, idle := w.began, w.ended, w.idle
			w.mu.Unlock()
			if began != i+1 || ended != i+1 {
				t.Errorf("after wait %d the observer saw %d waits begin and %d end, want %d each", i, began, ended, i+1)
			}
			if pause > 0 {
				if idle < pause {
					t.Errorf("wait %d of at least %v counted %v idle in all", i, pause, idle)
				}
				if wait.short() {
					t.Errorf("after a wait of at least %v (over spinWhile %v) the receiver would spin", pause, spinWhile)
				}
			}
		}
	}
	t.Run("inbox", func(t *testing.T) {
		_, ins, outs := newRig[int](ExactlyOnce, 1, 1)
		w := &waits{}
		ins[0].Observe(w)
		empty := make(chan struct{}, 1)
		ins[0].OnIdle(func() { empty <- struct{}{} })
		next := func() int { return ins[0].Next().Recs[0] }
		send := func(r int) { outs[0].Send(0, r); outs[0].Flush() }
		check(t, next, send, empty, &ins[0].wait, w)
	})
	t.Run("pair", func(t *testing.T) {
		j := newTestJob(true)
		left, right := NewInboxes[int](j, 1, 1), NewInboxes[string](j, 1, 1)
		lo, ro := NewOut(j, left, 0), NewOut(j, right, 0)
		p := NewPair(left[0], right[0])
		empty := make(chan struct{}, 1)
		p.Bind(nil, func() { empty <- struct{}{} })
		w := &waits{}
		p.Observe(w)
		next := func() int {
			m := p.Next()
			if m.Side == 0 {
				return m.Left[0]
			}
			n, _ := strconv.Atoi(m.Right[0])
			return n
		}
		send := func(r int) {
			if r%2 == 0 {
				lo.Send(0, r)
				lo.Flush()
			} else {
				ro.Send(0, strconv.Itoa(r))
				ro.Flush()
			}
		}
		check(t, next, send, empty, &p.wait, w)
	})
}
