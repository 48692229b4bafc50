package connector

import (
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/metrics"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

// fakeEmitter is a watermark generator whose last watermark sent the test
// sets by hand.
type fakeEmitter struct{ w int64 }

func (e *fakeEmitter) EmittedAt() *int64 { return &e.w }

// TestAligner moves the watermarks of three subtasks by hand: one is held
// while it is more than the drift ahead of the lowest of the others, the
// lowest never is, a released subtask holds no one back from then on
// (whatever its watermark), and one made from a restored watermark counts
// from it at once.
func TestAligner(t *testing.T) {
	g := NewAlignGroup(3)
	wms := make([]*fakeEmitter, 3)
	as := make([]*Aligner, 3)
	for i := range as {
		wms[i] = &fakeEmitter{w: noWatermark}
		as[i] = NewAligner(g, i, 100, wms[i])
	}
	set := func(i int, w int64) { wms[i].w = w }
	held := func(want ...bool) {
		t.Helper()
		for _, a := range as {
			a.Hold() // each publishes its watermark first
		}
		for i, a := range as {
			if got := a.Hold(); got != want[i] {
				t.Errorf("subtask %d (watermark %d): held %v, want %v", i, wms[i].w, got, want[i])
			}
		}
	}
	held(false, false, false) // no watermarks yet
	set(0, 1000)
	held(true, false, false) // the others have none: 0 waits for them
	set(1, 950)
	set(2, 899)
	held(true, false, false) // 0 is 101 ahead of 2
	set(2, 900)
	held(false, false, false) // 100 ahead: within the drift
	set(1, 1200)
	held(false, true, false)
	as[2].Release() // 2 ended: 1 is measured against 0 alone
	held(false, true, false)
	set(0, 1100)
	held(false, false, false)
	// A subtask restored at watermark 5000 counts from it before its next
	// watermark: the others are far behind, so it waits.
	restored := &fakeEmitter{w: 5000}
	as[2], wms[2] = NewAligner(g, 2, 100, restored), restored
	held(false, false, true)
}

// TestAlignerIdle: an idle subtask holds no one back until its watermark
// moves again, and then counts as before, for the others from their next
// watermark; one that is released after it went idle stays released; one
// that waits for the others does not go idle.
func TestAlignerIdle(t *testing.T) {
	g := NewAlignGroup(2)
	e0, e1 := &fakeEmitter{w: 1000}, &fakeEmitter{w: 500}
	a0, a1 := NewAligner(g, 0, 100, e0), NewAligner(g, 1, 100, e1)
	if !a0.Hold() || a1.Hold() {
		t.Fatalf("held %v and %v, want subtask 0 (500 ahead) held", a0.Hold(), a1.Hold())
	}
	a0.Idle()
	if !a0.Hold() {
		t.Error("a subtask that waits for the others went idle and stopped waiting")
	}
	a1.Idle()
	if a0.Hold() {
		t.Error("subtask 0 is held by an idle subtask")
	}
	if a1.Hold() {
		t.Error("the idle subtask is held")
	}
	e1.w = 600 // a record came: it is active again, at 600
	a1.Hold()
	// Subtask 0 sees it at its own next watermark (the others' only rise
	// but for a subtask back from idle, so it looks when its own moves).
	e0.w = 1001
	if !a0.Hold() {
		t.Error("subtask 0 is not held by the subtask that became active again 400 behind it")
	}
	a1.Idle()
	a1.Release()
	e1.w = 700
	a1.Hold()
	if a0.Hold() {
		t.Error("subtask 0 is held by a released subtask whose watermark moved")
	}
}

// TestWaitAlignedIsIdle: the time a subtask waits for the others counts as
// its chain's idle time, not busy.
func TestWaitAlignedIsIdle(t *testing.T) {
	r := metrics.New(&config.Config{Nodes: []config.NodeConfig{{Name: "in", Parallelism: 1}}})
	chain := r.Meter(0, 0)
	for range 100 {
		WaitAligned(chain)
	}
	tm := chain.Times()
	if tm.Idle < 100*AlignWait.Seconds() || tm.Busy > tm.Idle {
		t.Errorf("100 waits of %v: idle %.4f s, busy %.4f s; want the waits idle", AlignWait, tm.Idle, tm.Busy)
	}
}
