package kafka

import (
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
)

// Watermark alignment of a Kafka source (timestamps.max-drift) works at two
// levels, as Flink's does. Between subtasks, a subtask whose watermark is
// more than the drift ahead of the slowest other subtask's reads nothing
// until it catches up (connector.Aligner, asked before every record).
// Within a subtask, at every level of parallelism, a partition whose own
// watermark is more than the drift ahead of the lowest of the source's (its
// subtask's other partitions' that are not idle, and the other subtasks')
// is paused (alignPartitions): the subtask leaves its fetched records
// unread, and the client fetches no more of it. So a partition with a
// backlog, read beside partitions that are up to date, does not fill the
// state downstream with records that wait for their event time.

// Align makes the subtask and its partitions keep within the node's
// timestamps.max-drift of the source's slowest, following the watermarks
// of wm: generated code calls it for a source with a maximum drift.
func (s *Source[T]) Align(node int, wm *Watermarks) {
	if s.drift = connector.MaxDrift(s.env, node); s.drift == 0 {
		return
	}
	s.wm = wm
	s.m.Paused.Store(0)
	if s.align = connector.Align(s.env, node, s.sub, wm); s.align == nil {
		return
	}
	wm.align = s.align
	if s.done {
		s.align.Release()
	}
}

// alignPartitions pauses the partitions that are more than the drift ahead
// of the source's lowest watermark, and resumes those that are back within
// half of it: partitions whose event times stay further apart than the
// drift are then read in turns of half the drift of event time, not of a
// few records each (which paused and resumed one of
// BenchmarkKafkaAlignment's partitions 700 times in 0.7 s). Next calls it
// every watermarkEvery records and before every poll, so a partition
// stops at most that many records past the drift (plus what the
// watermarks of the other subtasks lag). A partition with nothing
// read yet has no watermark and is not paused, while it holds the others
// back (as a subtask with no watermark yet holds the other subtasks) until
// it has read a record or, with an idle timeout, is idle; a partition at
// its end is never paused. It reports whether a partition was paused or
// resumed: the client is told then (pauseFetches).
func (s *Source[T]) alignPartitions(now time.Time) bool {
	lowest, _ := s.wm.watermark(now) // the highest int64 when no partition is active
	if s.align != nil {
		lowest = min(lowest, s.align.Lowest())
	}
	flipped, paused := false, 0
	for _, p := range s.parts {
		drift := s.drift
		if p.paused {
			drift = max(drift/2, 1)
		}
		ahead := !p.done() && p.maxTS != minTime && connector.Ahead(p.maxTS-s.wm.bound-1, lowest, drift)
		if p.paused && !ahead {
			s.ci = 0 // its records fetched before are read again first
		}
		flipped = flipped || ahead != p.paused
		p.paused = ahead
		if ahead {
			paused++
		}
	}
	if flipped {
		s.m.Paused.Store(int64(paused))
	}
	return flipped
}

// heldFetches is how many fetches of a partition paused the subtask holds
// before the client stops fetching it.
const heldFetches = 2

// pauseFetches tells the client which partitions not to fetch: those at
// their end, and those paused of which the subtask holds heldFetches
// fetches with records it has not read. The client drops what it had
// fetched of a partition paused at the next poll, without moving its
// position past what the subtask took, and fetches it again once resumed,
// after the fetch on its way has come back (fetchMaxWait). A partition
// paused is fetched until the subtask holds that much of it, which it
// reads at once when it is resumed while the client fetches the next: a
// partition paused for a moment does not wait for a fetch when it is
// resumed, nor has the client drop one. With one fetch held, partitions
// read in turns at the drift waited for a fetch at nearly every turn
// (BenchmarkKafkaAlignment, lead=5s). Next calls it when alignPartitions
// has paused or resumed a partition, and fetch before and after every
// poll.
func (s *Source[T]) pauseFetches() {
	for _, p := range s.parts {
		p.unread = 0
	}
	for i := range s.chunks {
		if c := &s.chunks[i]; c.at < len(c.recs) {
			c.p.unread++
		}
	}
	var pause, resume map[string][]int32
	for _, p := range s.parts {
		want := p.done() || p.paused && p.unread >= heldFetches
		if want == p.fetchPaused {
			continue
		}
		p.fetchPaused = want
		m := &resume
		if want {
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

// fetchMaxWait is how long a broker holds a fetch that finds nothing new.
// A partition resumed is fetched once the fetch on its way to the broker
// has come back, so with a maximum drift it is shorter than Kafka's
// default of 500 ms: a resume while the partitions fetched were all at
// their end waited out the rest of it (half a second of a bounded run of
// BenchmarkKafkaAlignment's 0.5 s), where 100 ms costs an idle source a
// few more fetches a second.
func fetchMaxWait(n *config.NodeConfig) time.Duration {
	if n.Watermark.MaxDrift > 0 {
		return 100 * time.Millisecond
	}
	return 500 * time.Millisecond
}
