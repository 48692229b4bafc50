package kafka

import (
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
)

// fakeParts is a source's partitions for Watermarks.
type fakeParts struct {
	parts map[tp]*part
	cur   *part
}

func (f *fakeParts) partitionSet() map[tp]*part { return f.parts }
func (f *fakeParts) current() *part             { return f.cur }

func twoPartitions() (*fakeParts, *part, *part) {
	a := &part{tp: tp{"t", 0}, stop: -1, maxTS: minTime}
	b := &part{tp: tp{"t", 1}, stop: -1, maxTS: minTime}
	return &fakeParts{parts: map[tp]*part{a.tp: a, b.tp: b}}, a, b
}

// observe feeds n records of partition p at event time ts and returns the
// last watermark sent, if any.
func observe(g *Watermarks, f *fakeParts, p *part, ts int64, n int) (int64, bool) {
	f.cur = p
	var w int64
	var sent bool
	for range n {
		if x, ok := g.Observe(ts); ok {
			w, sent = x, true
		}
	}
	return w, sent
}

// The subtask's watermark is the lowest of its partitions': an empty
// partition holds it back, until it has been idle for the idle timeout.
func TestWatermarksPerPartition(t *testing.T) {
	f, a, b := twoPartitions()
	g := newWatermarks(f, config.WatermarkConfig{MaxOutOfOrderness: 10 * time.Millisecond})
	if _, sent := observe(g, f, a, 1000, watermarkEvery); sent {
		t.Fatal("a watermark while partition 1 has no record: it must hold event time back")
	}
	if w, sent := observe(g, f, b, 500, watermarkEvery); !sent || w != 500-10-1 {
		t.Fatalf("watermark %d (%v), want the lower partition's 489", w, sent)
	}
	if w, sent := observe(g, f, b, 2000, watermarkEvery); !sent || w != 1000-10-1 {
		t.Fatalf("watermark %d (%v), want partition 0's 989", w, sent)
	}

	// With an idle timeout, a quiet partition stops holding it back.
	f, a, b = twoPartitions()
	g = newWatermarks(f, config.WatermarkConfig{IdleTimeout: 30 * time.Millisecond})
	observe(g, f, a, 1000, watermarkEvery)
	if _, sent := g.Pending(); sent {
		t.Fatal("a watermark before partition 1 is idle")
	}
	time.Sleep(40 * time.Millisecond)
	if w, sent := observe(g, f, a, 1000, watermarkEvery); !sent || w != 999 {
		t.Fatalf("watermark %d (%v) once partition 1 is idle, want partition 0's 999", w, sent)
	}
	time.Sleep(40 * time.Millisecond)
	if !g.Idle(time.Now()) || g.Idle(time.Now()) {
		t.Fatal("every partition idle: the subtask says so, once")
	}
	if w, sent := observe(g, f, b, 5000, watermarkEvery); !sent || w != 4999 {
		t.Fatalf("watermark %d (%v) after partition 1 woke, want 4999 (partition 0 is idle)", w, sent)
	}
	if w, sent := g.Finish(); !sent || w != maxTime {
		t.Fatalf("finish %d %v", w, sent)
	}
}

// A subtask that waits for the other subtasks of its source (alignment)
// reads nothing, but is not idle: it does not say so, however long it
// waits; once it no longer waits, a quiet subtask says so as before.
func TestWatermarksHeldIsNotIdle(t *testing.T) {
	f, a, b := twoPartitions()
	g := newWatermarks(f, config.WatermarkConfig{IdleTimeout: 10 * time.Millisecond})
	group := connector.NewAlignGroup(2)
	other := &Watermarks{emitted: 0}
	connector.NewAligner(group, 1, 100, other) // the other subtask, at 0
	g.align = connector.NewAligner(group, 0, 100, g)
	observe(g, f, a, 1000, watermarkEvery)
	observe(g, f, b, 1000, watermarkEvery)
	if !g.align.Hold() {
		t.Fatalf("watermark %d, 999 ahead of the other's 0 with a drift of 100: want it held", g.emitted)
	}
	time.Sleep(20 * time.Millisecond)
	g.Idle(time.Now()) // the first look starts the partitions' clocks
	time.Sleep(20 * time.Millisecond)
	if g.Idle(time.Now()) {
		t.Fatal("a subtask that waits for the others said it is idle")
	}
	g.align.Release()
	if !g.Idle(time.Now()) {
		t.Fatal("a quiet subtask that no longer waits did not say it is idle")
	}
}

// A partition paused by the alignment (it is ahead of the others) reads
// nothing, but is not idle: it keeps holding the subtask's idleness back,
// and once resumed has the whole idle timeout before it is idle.
func TestWatermarksPausedIsNotIdle(t *testing.T) {
	f, a, b := twoPartitions()
	g := newWatermarks(f, config.WatermarkConfig{IdleTimeout: 10 * time.Millisecond})
	observe(g, f, a, 1000, watermarkEvery)
	observe(g, f, b, 5000, watermarkEvery)
	b.paused = true
	time.Sleep(20 * time.Millisecond)
	if g.Idle(time.Now()) {
		t.Fatal("the subtask said it is idle while a partition is paused")
	}
	if w, active := g.watermark(time.Now()); !active || w != 4999 {
		t.Fatalf("watermark %d (active %v): want the paused partition's 4999, partition 0 being idle", w, active)
	}
	b.paused = false
	if g.idleAt(b, time.Now()) {
		t.Fatal("a partition just resumed is idle: its timeout starts again when it is resumed")
	}
	time.Sleep(20 * time.Millisecond)
	if !g.Idle(time.Now()) {
		t.Fatal("both partitions quiet for the timeout since the resume: want the subtask idle")
	}
}

// The partition that holds the subtask's watermark back (the lowest),
// without an idle timeout, is told of once it has had no record for the
// warning's delay: once, until it has records again.
func TestWatermarksWarnStuck(t *testing.T) {
	f, a, b := twoPartitions()
	g := newWatermarks(f, config.WatermarkConfig{})
	g.warnAfter = 50 * time.Millisecond
	var told []string
	g.stuck = func(p *part, quiet time.Duration) { told = append(told, p.tp.String()) }
	observe(g, f, a, 1000, watermarkEvery)
	observe(g, f, b, 2000, watermarkEvery)
	time.Sleep(60 * time.Millisecond)
	g.Pending()
	if len(told) != 1 || told[0] != "t/0" {
		t.Fatalf("told of %v after partition 0 held the watermark with no record for the delay: want t/0 once", told)
	}
	time.Sleep(60 * time.Millisecond)
	g.Pending()
	if len(told) != 1 {
		t.Fatalf("told of %v: want t/0 once while it stays quiet", told)
	}
	observe(g, f, a, 3000, watermarkEvery) // partition 1 is the lowest now
	time.Sleep(60 * time.Millisecond)
	g.Pending()
	if len(told) != 2 || told[1] != "t/1" {
		t.Fatalf("told of %v: want t/1 next, the lowest once partition 0 moved past it", told)
	}
	observe(g, f, b, 4000, watermarkEvery)
	observe(g, f, a, 3000, 1)
	g.Pending() // the look that sees partition 0's record
	time.Sleep(60 * time.Millisecond)
	g.Pending()
	if len(told) != 3 || told[2] != "t/0" {
		t.Fatalf("told of %v: want t/0 again, quiet once more after it had records", told)
	}

	// With an idle timeout the partition goes idle instead: nothing to say.
	f, a, _ = twoPartitions()
	g = newWatermarks(f, config.WatermarkConfig{IdleTimeout: time.Hour})
	g.warnAfter = 10 * time.Millisecond
	g.stuck = func(p *part, quiet time.Duration) { t.Errorf("told of %v with an idle timeout set", p.tp) }
	observe(g, f, a, 1000, watermarkEvery)
	time.Sleep(20 * time.Millisecond)
	g.Pending()
}
