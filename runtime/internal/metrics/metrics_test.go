package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// graph is src -> (fused) keep -> hash -> win (an event-time window)
// with a fused sink, and late, which reads win.late.
func graph() *config.Config {
	cfg := &config.Config{Name: "t", Parallelism: 2, MaxParallelism: 128, Nodes: []config.NodeConfig{
		{Name: "src", Kind: "source", Section: "sources", Connector: "file", Options: map[string]string{"on-error": "skip"}},
		{Name: "keep", Kind: "filter", Section: "operators", FusedWith: "src", Inputs: []config.NodeInput{{From: "src", Partition: "forward"}}},
		{Name: "win", Kind: "aggregate", Section: "operators", Window: "tumbling 1s", Inputs: []config.NodeInput{{From: "keep", Partition: "hash"}}},
		{Name: "out", Kind: "sink", Section: "sinks", FusedWith: "win", Inputs: []config.NodeInput{{From: "win", Partition: "forward"}}},
		{Name: "sum", Kind: "reduce", Section: "operators", Inputs: []config.NodeInput{{From: "keep", Partition: "hash"}}},
	}}
	if err := cfg.Resolve(); err != nil {
		panic(err)
	}
	return cfg
}

func TestPublishAndFigures(t *testing.T) {
	r := New(graph())
	src := r.Meter(1, 0, 1)
	counts := []uint64{10, 4, 0, 0}
	src.Publish(counts)
	if counts[0] != 0 || counts[1] != 0 {
		t.Errorf("Publish left %v, want zeroes", counts)
	}
	src.Publish([]uint64{5, 1, 0, 0})
	win := r.Meter(0, 2, 3)
	win.Received(3)
	win.Publish([]uint64{2, 0, 1, 0}) // 2 results, 1 late
	r.Node(0, 1).Malformed.Add(2)

	if f := r.Figures(1, 1); f.In != 15 || f.Out != 5 {
		t.Errorf("keep[1]: in %d out %d, want its input's 15 and 5", f.In, f.Out)
	}
	if f := r.Figures(2, 0); f.In != 3 || f.Out != 2 || f.Late != 1 || f.Dropped != 1 {
		t.Errorf("win[0]: %+v, want in 3, out 2, late 1 dropped 1 (nothing reads win.late)", f)
	}
	if f := r.Figures(3, 0); f.In != 2 {
		t.Errorf("out[0]: in %d, want what win[0] emitted, 2", f.In)
	}
	if f := r.Figures(0, 1); f.Dropped != 2 {
		t.Errorf("src[1]: dropped %d, want its 2 malformed records (on-error skip)", f.Dropped)
	}
	if why := r.Dropped(4); why != "" {
		t.Errorf("a reduce without a window drops %q, want nothing", why)
	}
	ds := r.Drops()
	if len(ds) != 2 || ds[0].Name != "src" || ds[1].Name != "win" {
		t.Fatalf("drops %+v", ds)
	}
	if got := ds[1].Text(); !strings.HasPrefix(got, "operators.win: dropped 1 records too late for their window") {
		t.Errorf("drop text %q", got)
	}
	if got := ds[0].Text(); got != "sources.src: skipped 2 malformed records (on-error: skip)" {
		t.Errorf("drop text %q", got)
	}
}

func TestTimes(t *testing.T) {
	r := New(graph())
	c := r.Meter(0, 2, 3)
	c.Idle(time.Hour) // more than the wall: busy is never negative
	c.Backpressured(time.Millisecond)
	fill := 3
	c.Inbox(func() (int, int) { return fill, 16 })
	tm := c.Times()
	if tm.Busy != 0 || tm.Idle != 3600 || tm.Backpressured != 0.001 || tm.Fill != 3.0/16 || tm.Ended {
		t.Errorf("times %+v", tm)
	}
	r.EndAll()
	if !c.Times().Ended {
		t.Errorf("EndAll did not end the chain")
	}
	if (&Chain{}).Times().Fill != -1 {
		t.Errorf("a chain that never started has a fill")
	}
	// A restart's chain has its own inboxes: the last attempt's, full,
	// count no more.
	c = r.Meter(0, 2, 3)
	c.Inbox(func() (int, int) { return 1, 4 })
	if tm := c.Times(); tm.Fill != 0.25 || len(c.fill) != 1 {
		t.Errorf("after a restart: fill %v of %d inboxes, want 0.25 of 1", tm.Fill, len(c.fill))
	}
}

// TestTimesOfAWaitThatGoesOn: a chain waiting for input, or for room
// downstream, counts the wait as it goes, not only once it ends: one
// blocked for a minute does not show as busy for that minute.
func TestTimesOfAWaitThatGoesOn(t *testing.T) {
	r := New(graph())
	c := r.Meter(0, 2, 3)
	start := time.Now().Add(-time.Minute)
	c.Waiting(start, false)
	if tm := c.Times(); tm.Idle < 60 || tm.Busy > 1 {
		t.Errorf("waiting for input for a minute: %+v, want idle 60 s and more", tm)
	}
	// It ends: the wait's time is added once, not twice.
	c.Idle(time.Since(start))
	if tm := c.Times(); tm.Idle < 60 || tm.Idle > 61 {
		t.Errorf("after the wait: idle %v s, want 60", tm.Idle)
	}
	c.Waiting(time.Now().Add(-time.Minute), true)
	if tm := c.Times(); tm.Backpressured < 60 || tm.Busy > 1 {
		t.Errorf("waiting for room for a minute: %+v, want backpressured 60 s and more", tm)
	}
	// Canceled while it waits: the wait counts until the end, once.
	c.End()
	if tm := c.Times(); tm.Backpressured < 60 || tm.Backpressured > 61 || !tm.Ended {
		t.Errorf("ended while waiting: %+v, want backpressured 60 s", tm)
	}
}

func TestEvents(t *testing.T) {
	r := New(graph())
	var seen []Checkpoint
	r.OnCheckpoint(func(c Checkpoint) { seen = append(seen, c) })
	r.Event(events.Event{Kind: events.Checkpoint, Checkpoint: 1, Duration: time.Second, Alignment: time.Millisecond, Bytes: 10})
	r.Event(events.Event{Kind: events.CheckpointFailed, Checkpoint: 2, Error: "disk full"})
	r.Event(events.Event{Kind: events.Restart})
	r.Event(events.Event{Kind: events.Start})
	s := r.Summary()
	if s.Completed != 1 || s.Failed != 1 || s.Restarts != 1 || len(s.Checkpoints) != 2 || len(seen) != 2 {
		t.Fatalf("summary %+v, seen %d", s, len(seen))
	}
	if c := s.Checkpoints[0]; c.ID != 1 || c.Alignment != time.Millisecond || c.Bytes != 10 || s.Checkpoints[1].Failed != "disk full" {
		t.Errorf("checkpoints %+v", s.Checkpoints)
	}
	for range keep + 5 {
		r.Event(events.Event{Kind: events.Checkpoint})
	}
	if n := len(r.Summary().Checkpoints); n != keep {
		t.Errorf("%d checkpoints kept, want %d", n, keep)
	}
}

// TestJoinLateSides checks the late records of a join's two inputs: those
// of an input whose side output (late-left, late-right) is read are sent
// aside, the others dropped, and both are counted.
func TestJoinLateSides(t *testing.T) {
	cfg := &config.Config{Name: "t", Parallelism: 1, MaxParallelism: 128, Nodes: []config.NodeConfig{
		{Name: "a", Kind: "source", Section: "sources", Connector: "file"},
		{Name: "j", Kind: "join", Section: "operators", Window: "interval -1s 1s", Inputs: []config.NodeInput{{From: "a", Partition: "hash"}, {From: "a", Partition: "hash"}}},
		{Name: "lr", Kind: "sink", Section: "sinks", FusedWith: "j", Inputs: []config.NodeInput{{From: "j", Side: "late-right", Partition: "forward"}}},
	}}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	r := New(cfg)
	j := r.Meter(0, 1, 2)
	// j emitted 5, 3 of its left input late; lr emitted nothing; 4 of
	// j's right input late (the join's extra slot).
	j.Publish([]uint64{5, 0, 3, 0, 4})
	if f := r.Figures(1, 0); f.Out != 5 || f.Late != 7 || f.Dropped != 3 {
		t.Errorf("j: %+v, want out 5, late 7 (both inputs), dropped 3 (nothing reads j.late-left)", f)
	}
	if f := r.Figures(2, 0); f.In != 4 {
		t.Errorf("lr: in %d, want the 4 late records of j's right input", f.In)
	}
	if why := r.Dropped(1); why != "late" {
		t.Errorf("j drops %q, want late", why)
	}
	ds := r.Drops()
	if len(ds) != 1 || ds[0].Records != 3 || ds[0].Aside != 4 {
		t.Fatalf("drops %+v, want j: 3 dropped, 4 aside", ds)
	}
	if got := ds[0].Text(); !strings.Contains(got, "sent 4 records too late to be joined") || !strings.Contains(got, "dropped 3") {
		t.Errorf("drop text %q", got)
	}
	// Both sides read: nothing dropped.
	cfg.Nodes = append(cfg.Nodes, config.NodeConfig{Name: "ll", Kind: "sink", Section: "sinks", FusedWith: "j", Inputs: []config.NodeInput{{From: "j", Side: "late-left", Partition: "forward"}}})
	r = New(cfg)
	r.Meter(0, 1, 2, 3).Publish([]uint64{0, 0, 0, 2, 0, 0, 1})
	if why := r.Dropped(1); why != "" {
		t.Errorf("j with both late outputs read drops %q, want nothing", why)
	}
	if ds := r.Drops(); len(ds) != 1 || ds[0].Records != 0 || ds[0].Aside != 3 || !strings.Contains(ds[0].Text(), "j.late-left and j.late-right") {
		t.Errorf("drops %+v", ds)
	}
}
