package eventtime

import (
	"math"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/config"
)

// watermarkEvery is how many records a source reads between two looks at
// its watermark. Watermarks are derived from the records alone, at fixed
// record counts, never from a wall-clock timer: a bounded input gets its
// watermarks at the same places in every run and after every recovery, so
// windows and late records come out the same (deterministic replay).
const watermarkEvery = 64

// Watermarks generates a source subtask's watermarks: the highest event
// time seen minus the out-of-orderness bound, minus one (no record at or
// before the watermark is expected any more).
type Watermarks struct {
	// The pads keep what Observe writes at every record (maxTS, n, seen)
	// off the cache lines of the objects allocated next to it, another
	// source subtask's Watermarks among them, whose goroutine runs on
	// another core (false sharing: q4 at parallelism 2 took 1.3 times the
	// CPU in the runs where the two were allocated side by side).
	_       [64]byte
	bound   int64
	maxTS   int64
	emitted int64
	n       int
	// idle is set once the subtask told its receivers it is idle; seen
	// counts records, lastSeen is the count at the last look, lastRecord
	// when it changed.
	idle        bool
	idleTimeout time.Duration
	seen        uint64
	lastSeen    uint64
	lastRecord  time.Time
	// manual is set when a test driver sets the watermarks (Manual);
	// set is the one it set last.
	manual bool
	set    int64
	_      [64]byte
}

// Manual makes the generator follow the watermarks a test driver sets
// with Set, not the records: Observe and Idle send none, Pending sends
// the one set when it is ahead of the last one sent.
func (g *Watermarks) Manual() {
	g.manual = true
	g.set = MinTime
}

// Set is the watermark a test driver moves the source to: Pending sends it.
func (g *Watermarks) Set(w int64) { g.set = max(g.set, w) }

// NewWatermarks makes the watermark generator of a source subtask with
// event-time setup cfg.
func NewWatermarks(cfg config.WatermarkConfig) *Watermarks {
	return &Watermarks{bound: cfg.MaxOutOfOrderness.Milliseconds(), maxTS: MinTime, emitted: MinTime, idleTimeout: cfg.IdleTimeout}
}

// Observe takes the event time of the record just emitted. It returns a
// watermark to send (true) every watermarkEvery records when the watermark
// has moved.
func (g *Watermarks) Observe(ts int64) (int64, bool) {
	if ts > g.maxTS {
		g.maxTS = ts
	}
	g.n++
	g.seen++
	if g.manual || g.n < watermarkEvery {
		return 0, false
	}
	g.n = 0
	w := g.maxTS - g.bound - 1
	if g.maxTS == MinTime || w <= g.emitted {
		return 0, false
	}
	g.emitted = w
	return w, true
}

// EmittedAt is where the generator keeps the last watermark it sent
// (MinTime before the first), for its subtask's connector.Aligner to read
// between records on the subtask's goroutine: a load per record, where a
// call back at every watermark would keep Observe from being inlined.
func (g *Watermarks) EmittedAt() *int64 { return &g.emitted }

// Latest is the newest event time seen so far (MinTime before the first
// record): a record with it is never late.
func (g *Watermarks) Latest() int64 { return g.maxTS }

// Pending returns the watermark the records so far allow, when it is ahead
// of the last one sent: a source with nothing to read sends it at once, so
// that a slow stream's windows do not wait for the next records. (A bounded
// input read at full speed is never without something to read before its
// end, so its watermarks stay at the same places in every run.)
func (g *Watermarks) Pending() (int64, bool) {
	if g.manual {
		if g.set <= g.emitted || g.emitted == MaxTime {
			return 0, false
		}
		g.emitted = g.set
		return g.set, true
	}
	if g.maxTS == MinTime {
		return 0, false
	}
	w := g.maxTS - g.bound - 1
	if w <= g.emitted || g.emitted == MaxTime {
		return 0, false
	}
	g.emitted = w
	return w, true
}

// Finish returns, the first time the source has read all its input, the
// watermark that ends it: the end of time, at which every window fires.
func (g *Watermarks) Finish() (int64, bool) {
	if g.emitted == MaxTime {
		return 0, false
	}
	g.emitted = MaxTime
	return MaxTime, true
}

// Idle reports, when the source has nothing to read, whether it has been
// without records for the idle timeout and should say so (once).
func (g *Watermarks) Idle(now time.Time) bool {
	if g.idleTimeout == 0 || g.manual {
		return false
	}
	if g.seen != g.lastSeen || g.lastRecord.IsZero() {
		// Records came since the last look: the clock starts again (and
		// those records' watermarks made the subtask active again).
		g.lastSeen, g.lastRecord, g.idle = g.seen, now, false
		return false
	}
	if g.idle || now.Sub(g.lastRecord) < g.idleTimeout {
		return false
	}
	g.idle = true
	return true
}

// Encode and Decode keep a generator's state in a checkpoint, so that after
// a recovery the watermarks come at the same records as before.
func (g *Watermarks) Encode() []byte {
	w := codec.NewWriter(nil)
	w.Varint(g.maxTS)
	w.Varint(g.emitted)
	w.Uvarint(uint64(g.n))
	return w.Bytes()
}

// Decode restores what Encode kept.
func (g *Watermarks) Decode(b []byte) error {
	r := codec.NewReader(b)
	maxTS, emitted, n := r.Varint(), r.Varint(), r.Uvarint()
	if err := r.Err(); err != nil {
		return err
	}
	g.maxTS, g.emitted, g.n = maxTS, emitted, int(n)
	return nil
}

// DecodeLowest restores, from the kept states of several generators, one
// that is behind each of them: the lowest highest time seen and watermark
// sent.
func (g *Watermarks) DecodeLowest(states [][]byte) error {
	maxTS, emitted := int64(math.MaxInt64), int64(math.MaxInt64)
	for _, b := range states {
		var one Watermarks
		if err := one.Decode(b); err != nil {
			return err
		}
		maxTS, emitted = min(maxTS, one.maxTS), min(emitted, one.emitted)
	}
	if len(states) > 0 {
		g.maxTS, g.emitted, g.n = maxTS, emitted, 0
	}
	return nil
}

// TimeMillis converts an event time to Unix milliseconds.
func TimeMillis(t time.Time) int64 { return t.UnixMilli() }

// MillisTime converts Unix milliseconds to a time in UTC.
func MillisTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
