package stream

// Manual is the data plane of a job that a test driver runs one step at a
// time (runtime/internal/drive): every inbox is Direct, whatever its
// senders and receivers, so that what a source sends is processed, down
// to the sinks, before the send returns; and nothing ticks by itself: the
// driver hands out the ticks (Tick) when it moves processing time.
//
// This is safe because the driver lets one goroutine run at a time: a
// source's loop between two of its reads, or the driver itself. The
// bookkeeping of an inbox with several senders (alignment, the minimum
// watermark, the end) then sees their messages one after another, as it
// does from its channel. A sender is never held back by an alignment: the
// driver injects a checkpoint's barrier into every source before it lets
// any of them read on.
type Manual struct {
	ticks []func()
}

// NewManual makes the data plane of a driven job.
func NewManual() *Manual { return &Manual{} }

// Tick hands a Tick to every receiver that asked for ticks, in the order
// they were built (upstream chains first).
func (m *Manual) Tick() {
	for _, t := range m.ticks {
		t()
	}
}

// manualEnv is the Env of a job that a driver may run.
type manualEnv interface {
	// Manual is the driven data plane, nil when the job runs by itself.
	Manual() *Manual
}

// manualOf returns j's driven data plane, or nil.
func manualOf(j Env) *Manual {
	if m, ok := j.(manualEnv); ok {
		return m.Manual()
	}
	return nil
}
