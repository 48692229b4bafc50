package config

import "time"

// WatermarkConfig is a source's event-time setup.
type WatermarkConfig struct {
	// MaxOutOfOrderness is how far a record may be behind the newest
	// record so far and still be on time.
	MaxOutOfOrderness time.Duration
	// IdleTimeout, when set, is how long a source subtask without records
	// waits before it lets the watermark go on without it.
	IdleTimeout time.Duration
	// MaxDrift, when set, is how far a source subtask's watermark may run
	// ahead of the slowest of its source's other subtasks before it stops
	// reading until they catch up (watermark alignment; file and Kafka
	// sources).
	MaxDrift time.Duration
	// AlignGroup, when set, names the sources whose subtasks keep pace
	// with each other's watermarks, each within its own MaxDrift
	// (timestamps.align-group); a source with a MaxDrift and no group
	// keeps pace with itself only.
	AlignGroup string
	// AlignSlot and AlignSize are, once Resolve has run, the place of the
	// source's first subtask among those of its alignment group, and how
	// many subtasks the group has (those of its sources at their
	// parallelism); 0 and 0 before, or without a MaxDrift.
	AlignSlot, AlignSize int
}
