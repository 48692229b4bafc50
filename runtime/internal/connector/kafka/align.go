package kafka

import (
	"time"

	"github.com/pipegen/pipegen/runtime/internal/connector"
)

// Watermark alignment of a Kafka source (timestamps.max-drift) works at two
// levels, as Flink's does. Between subtasks, a subtask whose watermark is
// more than the drift ahead of the slowest other subtask's reads nothing
// until it catches up (connector.Aligner, asked before every record).
// Within a subtask, at every level of parallelism, a partition whose own
// watermark is more than the drift ahead of the lowest of the source's (its
// subtask's other partitions' that are not idle, and the other subtasks')
// is paused in the client, which then neither fetches nor keeps it
// (alignPartitions): a partition with a backlog, read beside partitions
// that are up to date, cannot fill the state downstream with records that
// wait for their event time.

// Align makes the subtask and its partitions keep within the node's
// timestamps.max-drift of the source's slowest, following the watermarks
// of wm: generated code calls it for a source with a maximum drift.
func (s *Source[T]) Align(node int, wm *Watermarks) {
	if s.drift = connector.MaxDrift(s.env, node); s.drift == 0 {
		return
	}
	s.wm = wm
	if s.align = connector.Align(s.env, node, s.sub, wm); s.align == nil {
		return
	}
	wm.align = s.align
	if s.done {
		s.align.Release()
	}
}

// alignPartitions pauses fetching the partitions that are more than the
// drift ahead of the source's lowest watermark, and resumes those that are
// back within it. It runs before every poll, once the records of the last
// one are read: a partition paused has read at most one fetch past the
// drift, and what the client had fetched of it is dropped at the next poll
// and fetched again once it is resumed (its position in the client does
// not move past what the subtask took). A partition with nothing read yet
// has no watermark and is not paused, while it holds the others back (as a
// subtask with no watermark yet holds the other subtasks) until it has
// read a record or, with an idle timeout, is idle; a partition at its end
// is never paused.
func (s *Source[T]) alignPartitions(now time.Time) {
	lowest, _ := s.wm.watermark(now) // the highest int64 when no partition is active
	if s.align != nil {
		lowest = min(lowest, s.align.Lowest())
	}
	var pause, resume map[string][]int32
	for _, p := range s.parts {
		ahead := !p.done() && p.maxTS != minTime && connector.Ahead(p.maxTS-s.wm.bound-1, lowest, s.drift)
		if ahead == p.paused {
			continue
		}
		p.paused = ahead
		m := &resume
		if ahead {
			m = &pause
		}
		if *m == nil {
			*m = map[string][]int32{}
		}
		(*m)[p.topic] = append((*m)[p.topic], p.partition)
	}
	if pause != nil {
		s.cl.PauseFetchPartitions(pause)
	}
	if resume != nil {
		s.cl.ResumeFetchPartitions(resume)
	}
}
