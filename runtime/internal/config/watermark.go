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
}
