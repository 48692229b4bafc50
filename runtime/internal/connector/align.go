package connector

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/metrics"
)

// Watermark alignment (timestamps.max-drift; Flink's watermark alignment).
//
// The subtasks of a source read their inputs at their own pace, and a
// keyed operator downstream takes the records of all of them while its
// event time is the slowest one's watermark: whatever a fast subtask has
// read ahead waits in the operator's state (windows that cannot fire,
// timers not due, a join's kept side). Nothing bounds it: two files of a
// history, one read faster, can fill the state with a whole day of one of
// them. With a maximum drift a subtask whose watermark is more than the
// drift ahead of the slowest of its source's other subtasks stops reading
// until they catch up; while it waits its chain still passes barriers on
// and hands its partial batches over, so checkpoints and the others go on.
//
// A subtask that has read all its input, or drains, holds no one back
// (Release), nor does one that is idle until its watermark moves again
// (Idle: a Kafka subtask whose partitions have had nothing to read for
// the idle timeout). Before its first watermark a subtask holds the others at
// their first: the drift is measured from the first watermarks of all of
// them.

// Event time's bounds (those of package eventtime, which connectors do not
// import): no watermark yet, and the end of input.
const (
	noWatermark  = math.MinInt64
	endWatermark = math.MaxInt64
)

// AlignGroup is the watermarks of the subtasks of one source, which each
// publishes and the others read.
type AlignGroup struct {
	wms []paddedWatermark
}

// paddedWatermark keeps each subtask's watermark, written every few dozen
// records, off the cache lines of the others' (false sharing).
type paddedWatermark struct {
	_  [64]byte
	wm atomic.Int64
}

// NewAlignGroup makes the group of a source of p subtasks, none of which
// has a watermark yet.
func NewAlignGroup(p int) *AlignGroup {
	g := &AlignGroup{wms: make([]paddedWatermark, p)}
	for i := range g.wms {
		g.wms[i].wm.Store(noWatermark)
	}
	return g
}

// Emitter is a source subtask's watermark generator, as an Aligner needs
// it: EmittedAt is where it keeps the last watermark it sent (the lowest
// int64 before the first), which the Aligner reads on the subtask's
// goroutine.
type Emitter interface {
	EmittedAt() *int64
}

// alignKey names a source node's alignment group in the run's shared
// values: the node's own, or the one its timestamps.align-group names.
type alignKey struct {
	node  int
	group string
}

// AlignWait is how long a subtask that is ahead of the others waits before
// it looks again: a source's Next sleeps it when Hold says so
// (WaitAligned), as a generator's subtask that is ahead does.
const AlignWait = 200 * time.Microsecond

// WaitAligned sleeps AlignWait, which chain counts as time waited for
// input: a subtask that waits for the others does no work, and the status
// page and pipegen_idle_seconds_total say so rather than counting it
// busy.
func WaitAligned(chain *metrics.Chain) {
	now := time.Now()
	chain.Waiting(now, false)
	time.Sleep(AlignWait)
	chain.Idle(time.Since(now))
}

// Align returns subtask sub's part in the alignment of source node in env
// (its timestamps.max-drift), following the watermarks of wm; nil when the
// node has no maximum drift, when its group has one subtask (the node's
// own group at parallelism 1), and outside a job's run (env is no Sharer),
// where there is no one to keep pace with. The group is the node's own,
// or that of every source with the same timestamps.align-group, whose
// subtasks have the places that config.Config.Resolve gave them (a
// configuration not resolved has no group: every job's and test's Env
// is resolved).
func Align(env Env, node, sub int, wm Emitter) *Aligner {
	drift := MaxDrift(env, node)
	sh, ok := env.(Sharer)
	w := env.Node(node).Watermark
	key, slot, size := alignKey{node: node}, w.AlignSlot, w.AlignSize
	if w.AlignGroup != "" {
		key = alignKey{node: -1, group: w.AlignGroup}
	}
	if drift == 0 || !ok || size < 2 {
		return nil
	}
	g := sh.Shared(key, func() any { return NewAlignGroup(size) }).(*AlignGroup)
	a := NewAligner(g, slot+sub, drift, wm)
	a.gauge = &env.Metrics().Node(node, sub).Drift
	a.report(a.Lowest())
	return a
}

// Aligner is one subtask's part in its source's alignment: it publishes
// the subtask's watermarks and tells the source when to stop reading.
type Aligner struct {
	group     *AlignGroup
	sub       int
	drift     int64  // milliseconds, positive
	emitted   *int64 // the subtask's last watermark sent (Emitter)
	published int64
	// gauge, when set, is where the subtask's drift is reported
	// (metrics.Node.Drift).
	gauge    *atomic.Int64
	held     bool
	released bool
	// idle is set by Idle until the subtask's watermark moves from
	// idleAt.
	idle   bool
	idleAt int64
}

// NewAligner makes the part of subtask sub in group g, with a maximum
// drift in milliseconds (positive), following the watermarks of wm.
func NewAligner(g *AlignGroup, sub int, driftMillis int64, wm Emitter) *Aligner {
	a := &Aligner{group: g, sub: sub, drift: driftMillis, emitted: wm.EmittedAt(), published: noWatermark}
	// A subtask restored from a checkpoint is as far as its watermark
	// already: published, and held if need be.
	a.hold()
	return a
}

// Hold reports whether the subtask is ahead of the slowest of the others
// by more than the drift and should read nothing for now. The source asks
// before every record: between two watermarks of its own it is one
// comparison, and the others' watermarks are read only when its own moved
// or while it waits. (They only rise, but for a subtask back from idle,
// which a subtask that is not waiting sees at its own next watermark.)
func (a *Aligner) Hold() bool {
	if *a.emitted == a.published && !a.held {
		return false
	}
	return a.hold()
}

// hold is the rest of Hold, out of line so that Hold inlines.
func (a *Aligner) hold() bool {
	if a.released {
		return false
	}
	if a.idle {
		if *a.emitted == a.idleAt {
			return false
		}
		a.idle = false
	}
	if w := *a.emitted; w != a.published {
		a.publish(w)
	}
	a.held = a.ahead()
	return a.held
}

// Held reports whether the subtask waits for the others, as Hold last
// said.
func (a *Aligner) Held() bool { return a.held }

// Release tells the others that the subtask holds no one back from now on:
// it has read all its input, or it drains.
func (a *Aligner) Release() {
	a.publish(endWatermark)
	a.held, a.released = false, true
	a.report(endWatermark)
}

// Idle tells the others that the subtask holds no one back until its
// watermark moves again: it has nothing to read (its watermark generator
// said it is idle). A subtask that waits for the others (Held) is not
// idle: it has records it does not read; Idle does nothing then.
func (a *Aligner) Idle() {
	if a.released || a.held {
		return
	}
	a.publish(endWatermark)
	a.held, a.idle, a.idleAt = false, true, *a.emitted
	a.report(endWatermark)
}

func (a *Aligner) publish(w int64) {
	a.published = w
	a.group.wms[a.sub].wm.Store(w)
}

// ahead reports whether the subtask's watermark is more than the drift
// ahead of the lowest of the others', and reports its drift.
func (a *Aligner) ahead() bool {
	lowest := a.Lowest()
	a.report(lowest)
	return Ahead(a.published, lowest, a.drift)
}

// report stores the subtask's drift from the lowest of the others'
// watermarks in the gauge, if any: 0 when none holds it back (it is the
// lowest, or the others ended or are idle), the lowest int64 while it or
// one of them has no watermark yet.
func (a *Aligner) report(lowest int64) {
	if a.gauge == nil {
		return
	}
	switch {
	case a.published == endWatermark || lowest == endWatermark:
		a.gauge.Store(0)
	case a.published == noWatermark || lowest == noWatermark:
		a.gauge.Store(math.MinInt64)
	default:
		a.gauge.Store(max(a.published-lowest, 0))
	}
}

// Lowest is the lowest of the other subtasks' watermarks as they published
// them: the lowest int64 while one has none yet, the highest when none
// holds the subtask back (all ended, drained or idle).
func (a *Aligner) Lowest() int64 {
	lowest := int64(endWatermark)
	for i := range a.group.wms {
		if i != a.sub {
			lowest = min(lowest, a.group.wms[i].wm.Load())
		}
	}
	return lowest
}

// Ahead reports whether watermark w is more than drift (positive
// milliseconds) ahead of lowest. Neither no watermark yet (the lowest
// int64) nor the end of input (the highest) is ahead of anything.
func Ahead(w, lowest, drift int64) bool {
	if w == noWatermark || w == endWatermark {
		return false
	}
	// w - drift, which overflows only below the start of time (the drift
	// is positive): no limit then.
	limit := w - drift
	return limit < w && limit > lowest
}

// MaxDrift is source node's timestamps.max-drift in env, in whole
// milliseconds (event time's unit; a drift under one is one); 0 without.
func MaxDrift(env Env, node int) int64 {
	d := env.Node(node).Watermark.MaxDrift
	if d <= 0 {
		return 0
	}
	return max(d.Milliseconds(), 1)
}
