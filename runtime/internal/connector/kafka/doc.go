// Package kafka is the Kafka connector, on github.com/twmb/franz-go: a
// source that reads the partitions of its topics, shared out over its
// subtasks, with their offsets in every checkpoint (a restore at another
// parallelism shares them out again), watermarks per partition, and, for
// backfills and tests, a bounded mode that stops at the offsets that were
// the newest when the job started; and a sink that writes exactly once
// with Kafka transactions committed with the checkpoints (two-phase
// commit), at least once by waiting for Kafka's acknowledgements at every
// barrier, or without guarantee in mode none.
package kafka
