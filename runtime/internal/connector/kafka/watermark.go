package kafka

import (
	"math"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
)

// The bounds of event time (as package stream has them).
const (
	maxTime int64 = math.MaxInt64
)

// watermarkEvery is how many records a source reads between two looks at
// its watermark, as for the other sources.
const watermarkEvery = 64

// partitions is what Watermarks needs of a source: its partitions, and the
// one the last record came from.
type partitions interface {
	partitionSet() map[tp]*part
	current() *part
}

func (s *Source[T]) partitionSet() map[tp]*part { return s.parts }
func (s *Source[T]) current() *part             { return s.cur }

// Watermarks generates a Kafka source subtask's watermarks per partition,
// as Flink does: each partition's watermark is the newest event time read
// from it minus the out-of-orderness bound (minus one), and the subtask's
// is the lowest of them. A partition without records for the idle timeout
// does not hold it back (nor does a bounded partition at its end), so an
// empty partition does not stall the windows; once every partition is
// idle, the subtask tells its receivers (Idle). Without an idle timeout a
// partition that has no records holds event time back until it has.
//
// Each partition's newest event time is part of the source's position in
// checkpoints, so that it moves with the partition when a restore shares
// the partitions out at another parallelism.
type Watermarks struct {
	src         partitions
	bound       int64
	idleTimeout time.Duration
	emitted     int64
	n           int
	// idle is set once the subtask said it is idle.
	idle bool
	// seen counts the records of each partition; looked is the count at
	// the last look and when it changed.
	seen   map[*part]uint64
	looked map[*part]look

	// align, when set, is the subtask's part in its source's alignment
	// (Source.Align): told when the subtask goes idle.
	align *connector.Aligner

	// stuck, when set, tells the job's log of a partition that has had no
	// record for warnAfter while it holds the watermark back, without an
	// idle timeout (once, until it has records again: warned); looked
	// for at most once a second, or warnAfter when shorter (stuckLook).
	stuck     func(p *part, quiet time.Duration)
	warnAfter time.Duration
	warned    *part
	stuckLook time.Time
}

// holdWarning is how long a partition without records may hold its
// subtask's watermark back, without an idle timeout, before the job's log
// says so: event time stops at it for as long as it has none, and with
// timestamps.max-drift the other partitions wait for it too.
const holdWarning = 30 * time.Second

type look struct {
	seen uint64
	at   time.Time
}

// Watermarks makes the watermark generator of the source subtask, as the
// checkpoint the job resumes from left it.
func (s *Source[T]) Watermarks(t *checkpoint.Task, node int) *Watermarks {
	g := newWatermarks(s, t.Node(node).Watermark)
	g.stuck = s.stuck
	t.RestoreGenerator(node, g)
	return g
}

func newWatermarks(src partitions, cfg config.WatermarkConfig) *Watermarks {
	return &Watermarks{src: src, bound: cfg.MaxOutOfOrderness.Milliseconds(), idleTimeout: cfg.IdleTimeout,
		emitted: minTime, seen: map[*part]uint64{}, looked: map[*part]look{}, warnAfter: holdWarning}
}

// stuck writes to the job's log that partition p has had no record for
// quiet and holds the subtask's watermark back (Watermarks.warnStuck).
func (s *Source[T]) stuck(p *part, quiet time.Duration) {
	if quiet >= time.Second {
		quiet = quiet.Round(time.Second)
	} else {
		quiet = quiet.Round(time.Millisecond)
	}
	also := ""
	if s.drift > 0 {
		also = ", and the partitions ahead of it by more than timestamps.max-drift wait for it"
	}
	s.env.Logf("sources.%s[%d]: partition %s has had no record for %s and holds the watermark back: event time stops at it until it has one%s; if it may stay empty, set sources.%s.timestamps.idle-timeout", s.name, s.sub, p.tp, quiet, also, s.name)
}

// Observe takes the event time of the record just emitted, from the
// source's current partition. Every watermarkEvery records it returns the
// subtask's watermark when it has moved.
func (g *Watermarks) Observe(ts int64) (int64, bool) {
	p := g.src.current()
	if ts > p.maxTS {
		p.maxTS = ts
	}
	g.seen[p]++
	if g.n++; g.n < watermarkEvery {
		return 0, false
	}
	g.n = 0
	return g.advance(time.Now())
}

// Latest is the newest event time read from any partition: a record with
// it is never late.
func (g *Watermarks) Latest() int64 {
	latest := minTime
	for _, p := range g.src.partitionSet() {
		latest = max(latest, p.maxTS)
	}
	return latest
}

// Pending returns the watermark the records so far allow when it is ahead
// of the last one sent: the source has nothing to read now.
func (g *Watermarks) Pending() (int64, bool) {
	if g.emitted == maxTime {
		return 0, false
	}
	return g.advance(time.Now())
}

// advance computes the subtask's watermark at now and returns it when it
// moved.
func (g *Watermarks) advance(now time.Time) (int64, bool) {
	w, active := g.watermark(now)
	if g.stuck != nil && g.idleTimeout == 0 && now.Sub(g.stuckLook) >= min(time.Second, g.warnAfter) {
		g.stuckLook = now
		g.warnStuck(now)
	}
	if !active || w <= g.emitted {
		return 0, false
	}
	g.emitted = w
	g.idle = false
	return w, true
}

// watermark is the lowest watermark of the partitions that are active at
// now; active is false when none is.
func (g *Watermarks) watermark(now time.Time) (w int64, active bool) {
	w = maxTime
	for _, p := range g.src.partitionSet() {
		if p.done() || g.idleAt(p, now) {
			continue
		}
		active = true
		if p.maxTS == minTime {
			// Nothing read from it yet: no watermark. The partitions
			// after it are still looked at, so that each one's last
			// record is known (warnStuck).
			w = minTime
			continue
		}
		w = min(w, p.maxTS-g.bound-1)
	}
	return w, active
}

// warnStuck tells the job's log, once, of the partition whose watermark is
// the subtask's (the lowest) when it has had no record for warnAfter; once
// that partition has records again it may tell of it again.
func (g *Watermarks) warnStuck(now time.Time) {
	if g.warned != nil && now.Sub(g.looked[g.warned].at) < g.warnAfter {
		g.warned = nil // it had records since
	}
	var low *part
	for _, p := range g.src.partitionSet() {
		if p.done() {
			continue
		}
		if low == nil || p.maxTS < low.maxTS || p.maxTS == low.maxTS && p.tp.less(low.tp) {
			low = p
		}
	}
	if low == nil || low == g.warned {
		return
	}
	if l, ok := g.looked[low]; ok && now.Sub(l.at) >= g.warnAfter {
		g.warned = low
		g.stuck(low, now.Sub(l.at))
	}
}

// idleAt reports whether partition p has had no record for the idle
// timeout at now. A partition paused by the alignment is not idle: it has
// records the subtask does not fetch yet, and its timeout starts again
// once it is resumed.
func (g *Watermarks) idleAt(p *part, now time.Time) bool {
	seen := g.seen[p]
	l, ok := g.looked[p]
	if !ok || l.seen != seen || p.paused {
		g.looked[p] = look{seen: seen, at: now}
		return false
	}
	return g.idleTimeout > 0 && now.Sub(l.at) >= g.idleTimeout
}

// Finish returns, the first time a bounded source has read all its
// partitions, the watermark that ends it: the end of time.
func (g *Watermarks) Finish() (int64, bool) {
	if g.emitted == maxTime {
		return 0, false
	}
	g.emitted = maxTime
	return maxTime, true
}

// Idle reports, when the source has nothing to read, whether every one of
// its partitions has been idle for the idle timeout (once, until records
// come again). A subtask that owns no partition (more subtasks than the
// topics have partitions) is idle at once, with or without an idle
// timeout, as Flink's readers without splits are: it has nothing to wait
// for, and would hold the watermark downstream, and with
// timestamps.max-drift the other subtasks, back for good. A partition
// found later (discovery-interval) wakes it with its first watermark.
func (g *Watermarks) Idle(now time.Time) bool {
	if g.idle {
		return false
	}
	if len(g.src.partitionSet()) == 0 {
		g.idle = true
		if g.align != nil {
			g.align.Idle()
		}
		return true
	}
	if g.idleTimeout == 0 {
		return false
	}
	if g.align != nil && g.align.Held() {
		// Waiting for the other subtasks (Source.Align): not idle, its
		// partitions have records it does not read yet.
		return false
	}
	if _, active := g.watermark(now); active {
		return false
	}
	g.idle = true
	if g.align != nil {
		g.align.Idle()
	}
	return true
}

// EmittedAt is where the generator keeps the last watermark it sent, for
// the subtask's connector.Aligner to read between records.
func (g *Watermarks) EmittedAt() *int64 { return &g.emitted }

// Encode and Decode keep the subtask's last watermark in a checkpoint (the
// partitions' event times are in the source's position).
func (g *Watermarks) Encode() []byte {
	w := codec.NewWriter(nil)
	w.Varint(g.emitted)
	w.Uvarint(uint64(g.n))
	return w.Bytes()
}

// Decode restores what Encode kept.
func (g *Watermarks) Decode(b []byte) error {
	r := codec.NewReader(b)
	emitted, n := r.Varint(), r.Uvarint()
	if err := r.Err(); err != nil {
		return err
	}
	g.emitted, g.n = emitted, int(n)
	return nil
}

// DecodeLowest restores, from what several subtasks' generators kept (at
// another parallelism), the lowest watermark any of them sent: the
// partitions' own event times come with their positions.
func (g *Watermarks) DecodeLowest(states [][]byte) error {
	lowest := int64(math.MaxInt64)
	for _, b := range states {
		one := Watermarks{}
		if err := one.Decode(b); err != nil {
			return err
		}
		lowest = min(lowest, one.emitted)
	}
	if len(states) > 0 {
		g.emitted, g.n = lowest, 0
	}
	return nil
}
