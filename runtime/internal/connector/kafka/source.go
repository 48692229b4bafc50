package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// pollWait is the longest Next waits for records when none are fetched:
// short, so that its subtask still flushes batches and injects barriers.
const pollWait = 10 * time.Millisecond

// requestTimeout bounds the admin requests of a source or sink (listing
// partitions and offsets, committing transactions).
const requestTimeout = 30 * time.Second

// minTime is the event time of a partition before its first record.
const minTime int64 = math.MinInt64

// part is one partition a source subtask reads.
type part struct {
	tp
	// next is the offset of the next record to read: the position kept in
	// checkpoints.
	next int64
	// stop is where a bounded source stops (the partition's end when the
	// job started); -1 for an unbounded one.
	stop int64
	// maxTS is the newest event time read from the partition.
	maxTS int64
	// end is the partition's readable end (its last stable offset) at the
	// latest fetch, for the lag; -1 before one.
	end int64
	// paused is set while the partition is ahead of the source's slowest
	// by more than the maximum drift (alignPartitions): the subtask does
	// not read it, and from its next poll on the client does not fetch it
	// (fetchPaused, what the client was told).
	paused      bool
	fetchPaused bool
	// unread is how many fetches of the partition the subtask holds with
	// records it has not read (pauseFetches).
	unread int
}

func (p *part) done() bool { return p.stop >= 0 && p.next >= p.stop }

// chunk is records of one partition from a fetch, taken in order; at is
// the next one to take.
type chunk struct {
	p    *part
	recs []*kgo.Record
	at   int
}

// Source is one subtask of a Kafka source: it reads the partitions of its
// topics that it owns (owner), from the offsets of the checkpoint the job
// resumes from, or from the start position on a fresh start.
//
// Its position in a checkpoint is the next offset of every partition it
// reads; a restore at another parallelism shares the partitions out
// again, each with its offset. Records of aborted transactions are never
// read (isolation read-committed, the default), and the offsets of control
// records count: a bounded source is at its end once every partition's
// next offset has reached its stop offset.
type Source[T any] struct {
	name string
	node int
	sub  int
	p    int
	env  connector.Env
	ctl  *checkpoint.SourceCtl
	dec  format.Decoder[T]
	skip bool
	// deadLetter is set for on-error=dead-letter; dead is what takes the
	// malformed records then (OnDeadLetter).
	deadLetter bool
	dead       func(string)
	// meta fills the record's fields tagged kafka:"key" and the like.
	meta *meta

	ctx    context.Context
	cl     *kgo.Client
	adm    *kadm.Client
	topics []string
	parts  map[tp]*part
	// bounded sources read to the end each partition had when the job
	// started, and discover no partitions.
	bounded  bool
	discover time.Duration
	lastLook time.Time

	// chunks are the records fetched and not read yet; ci is the first
	// that may have some to read (the chunks before it are read, or of
	// partitions paused).
	chunks []chunk
	ci     int
	// cur is the partition of the record Next returned last, ts its
	// Kafka timestamp (Unix milliseconds), off its offset.
	cur *part
	ts  int64
	off int64

	uncounted int
	skipped   int64
	firstSkip string
	done      bool

	// group, when commit-offsets is set, receives the offsets of each
	// completed checkpoint (for monitoring tools only).
	group      string
	commits    []groupCommit
	committing atomic.Bool

	// m and chain are the subtask's counters; read counts the bytes of
	// values read since the last count.
	m     *metrics.Node
	chain *metrics.Chain
	read  int64

	// align keeps the subtask within timestamps.max-drift of the others
	// (Align); nil without, and at parallelism 1. drift is the maximum
	// drift in milliseconds (0 without), which also keeps the subtask's
	// partitions within it of each other (alignPartitions), following the
	// watermarks of wm; unaligned counts the records read since they were
	// last compared.
	align     *connector.Aligner
	drift     int64
	wm        *Watermarks
	unaligned int
}

// groupCommit is the offsets a checkpoint holds, committed to the group
// once the checkpoint is complete.
type groupCommit struct {
	id      int64
	offsets kadm.Offsets
}

// NewSource prepares subtask sub of the Kafka source node, decoding the
// records' values with f.
func NewSource[T any](env connector.Env, node, sub int, f format.Format[T]) *Source[T] {
	n := env.Node(node)
	s := &Source[T]{name: n.Name, node: node, sub: sub, p: env.Parallelism(node), env: env, dec: f.NewDecoder(), ctx: env.Context(), parts: map[tp]*part{}}
	fail := func(err error) { fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s: %w", s.name, err)}) }
	switch onErr := n.Option("on-error"); onErr {
	case "", "fail":
	case "skip":
		s.skip = true
	case "dead-letter":
		s.deadLetter = true
	default:
		fail(fmt.Errorf("on-error wants fail, skip or dead-letter, got %q", onErr))
	}
	var err error
	if s.meta, err = metaOf[T](); err != nil {
		fail(err)
	}
	s.topics = splitList(n.Option("topic"))
	if len(s.topics) == 0 {
		fail(errors.New("topic is empty: name a topic, or several separated by commas"))
	}
	s.bounded = n.Option("bounded") == "latest"
	if s.discover, err = durationOption(n, "discovery-interval", 0); err != nil {
		fail(err)
	}
	s.group = n.Option("group")
	if n.Option("commit-offsets") == "true" && s.group == "" {
		fail(errors.New("commit-offsets needs group: the consumer group to commit the offsets to"))
	}
	if n.Option("commit-offsets") != "true" {
		s.group = ""
	}
	opts, err := clientOpts(n)
	if err != nil {
		fail(err)
	}
	// A partition found by discovery is fetched after the next metadata
	// refresh, which this bounds.
	opts = append(opts, kgo.KeepControlRecords(), kgo.FetchMaxWait(fetchMaxWait(n)), kgo.MetadataMinAge(250*time.Millisecond))
	switch iso := n.Option("isolation"); iso {
	case "", "read-committed":
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	case "read-uncommitted":
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	default:
		fail(fmt.Errorf("isolation wants read-committed or read-uncommitted, got %q", iso))
	}
	// Partitions are added once their offsets are known.
	opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{}))
	s.cl, err = kgo.NewClient(opts...)
	if err != nil {
		fail(err)
	}
	s.adm = kadm.NewClient(s.cl)
	s.ctl = env.Checkpoints().NewSourceCtl()
	s.m, s.chain = env.Metrics().Node(node, sub), env.Metrics().Chain(node, sub)
	s.m.Lag.Store(-1) // in records, once a fetch has told the partitions' ends
	// The client is closed when the job ends, whatever the way.
	context.AfterFunc(s.ctx, s.cl.Close)
	s.start(env.Checkpoints().RestoredNode(node), n)
	return s
}

// start sets the partitions the subtask reads and where each begins: at
// its offset in the restored checkpoint, at the start position on a fresh
// start, and at the earliest offset for one that is new since the
// checkpoint.
func (s *Source[T]) start(restored *storage.NodeState, n *config.NodeConfig) {
	owned, err := s.listPartitions()
	if err != nil {
		fault.Abortf("sources.%s: %w", s.name, err)
	}
	var fromCheckpoint map[tp]saved
	if restored != nil {
		fromCheckpoint = map[tp]saved{}
		for _, st := range restored.Sources {
			ps, err := decodePosition(st.Position)
			if err != nil {
				fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s: restore the position of subtask %d: %w", s.name, st.Subtask, err)})
			}
			for _, p := range ps {
				fromCheckpoint[p.tp] = p
			}
		}
		// A partition of the checkpoint is read by its owner now, even
		// when the topic lost it: its records are gone then.
		for t := range fromCheckpoint {
			if owner(t.topic, t.partition, s.p) == s.sub && !slices.Contains(owned, t) {
				s.env.Logf("sources.%s[%d]: partition %s is in the checkpoint but no longer in the topic", s.name, s.sub, t)
			}
		}
	}
	var fresh, unstopped []tp
	for _, t := range owned {
		if sv, ok := fromCheckpoint[t]; ok {
			p := &part{tp: t, next: sv.next, stop: sv.stop, maxTS: sv.maxTS, end: -1}
			switch {
			case !s.bounded:
				p.stop = -1 // read on (a bounded job's checkpoint, run live now)
			case p.stop < 0:
				// An unbounded job's checkpoint, run bounded now: to the
				// end the partition has now.
				unstopped = append(unstopped, t)
			}
			s.parts[t] = p
			continue
		}
		fresh = append(fresh, t)
	}
	if len(unstopped) > 0 {
		if err := s.stopAtEnd(unstopped); err != nil {
			fault.Abortf("sources.%s: %w", s.name, err)
		}
	}
	if len(fresh) > 0 {
		position := n.Option("start")
		if restored != nil {
			// New since the checkpoint: every record of it is new to the
			// job.
			position = "earliest"
		}
		if err := s.begin(fresh, position, restored != nil); err != nil {
			fault.Abortf("sources.%s: %w", s.name, err)
		}
	}
	s.consume(s.sorted())
	s.lastLook = time.Now()
}

// sorted lists the subtask's partitions in order.
func (s *Source[T]) sorted() []*part {
	var ps []*part
	for _, p := range s.parts {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *part) int {
		if a.topic != b.topic {
			if a.topic < b.topic {
				return -1
			}
			return 1
		}
		return int(a.partition - b.partition)
	})
	return ps
}

// listPartitions returns the partitions of the source's topics that this
// subtask owns.
func (s *Source[T]) listPartitions() ([]tp, error) {
	ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
	defer cancel()
	details, err := s.adm.ListTopics(ctx, s.topics...)
	if err != nil {
		return nil, fmt.Errorf("list the partitions of %v: %w", s.topics, err)
	}
	var owned []tp
	for _, topic := range s.topics {
		d, ok := details[topic]
		if !ok || d.Err != nil {
			why := "it does not exist"
			if ok {
				why = d.Err.Error()
			}
			return nil, fmt.Errorf("topic %q: %s", topic, why)
		}
		for p := range d.Partitions {
			if owner(topic, p, s.p) == s.sub {
				owned = append(owned, tp{topic, p})
			}
		}
	}
	slices.SortFunc(owned, func(a, b tp) int {
		if a.topic != b.topic {
			if a.topic < b.topic {
				return -1
			}
			return 1
		}
		return int(a.partition - b.partition)
	})
	return owned, nil
}

// begin resolves where the partitions ts start, and where a bounded source
// stops in them, to offsets: earliest, latest, a time (RFC 3339) or the
// group's committed offsets. Offsets, not positions, so that a checkpoint
// taken before the first record still says where the job began.
func (s *Source[T]) begin(ts []tp, position string, discovered bool) error {
	ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
	defer cancel()
	topics := topicsOf(ts)
	var listed kadm.ListedOffsets
	var err error
	committedEnd := func() (kadm.ListedOffsets, error) {
		if s.readCommitted() {
			return s.adm.ListCommittedOffsets(ctx, topics...)
		}
		return s.adm.ListEndOffsets(ctx, topics...)
	}
	var groupOffsets kadm.OffsetResponses
	switch position {
	case "", "earliest", "group":
		listed, err = s.adm.ListStartOffsets(ctx, topics...)
		if err == nil && position == "group" {
			g := s.env.Node(s.node).Option("group")
			if g == "" {
				return errors.New("start group needs group: the consumer group whose committed offsets the job starts from")
			}
			groupOffsets, err = s.adm.FetchOffsetsForTopics(ctx, g, topics...)
		}
	case "latest":
		listed, err = committedEnd()
	default:
		at, perr := time.Parse(time.RFC3339, position)
		if perr != nil {
			return fmt.Errorf("start wants earliest, latest, group or a time such as 2026-11-29T10:00:00Z, got %q", position)
		}
		listed, err = s.adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topics...)
	}
	if err != nil {
		return fmt.Errorf("list the offsets of %v: %w", topics, err)
	}
	for _, t := range ts {
		o, ok := listed.Lookup(t.topic, t.partition)
		if !ok || o.Err != nil {
			return fmt.Errorf("offset of %s: %v", t, o.Err)
		}
		p := &part{tp: t, next: o.Offset, stop: -1, maxTS: minTime, end: -1}
		if groupOffsets != nil {
			if g, ok := groupOffsets.Lookup(t.topic, t.partition); ok && g.Err == nil && g.At >= 0 {
				p.next = g.At
			}
		}
		if s.bounded && discovered {
			p.stop = p.next // new since the job started: nothing to read
		}
		s.parts[t] = p
	}
	if s.bounded && !discovered {
		return s.stopAtEnd(ts)
	}
	return nil
}

// stopAtEnd makes the end each of the partitions ts has now where a
// bounded source stops reading it.
func (s *Source[T]) stopAtEnd(ts []tp) error {
	ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
	defer cancel()
	topics := topicsOf(ts)
	list := s.adm.ListEndOffsets
	if s.readCommitted() {
		list = s.adm.ListCommittedOffsets
	}
	ends, err := list(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list the end offsets of %v: %w", topics, err)
	}
	for _, t := range ts {
		e, ok := ends.Lookup(t.topic, t.partition)
		if !ok || e.Err != nil {
			return fmt.Errorf("end offset of %s: %v", t, e.Err)
		}
		s.parts[t].stop = max(e.Offset, s.parts[t].next)
	}
	return nil
}

func (s *Source[T]) readCommitted() bool {
	return s.env.Node(s.node).Option("isolation") != "read-uncommitted"
}

func topicsOf(ts []tp) []string {
	var topics []string
	for _, t := range ts {
		if !slices.Contains(topics, t.topic) {
			topics = append(topics, t.topic)
		}
	}
	return topics
}

// consume has the client fetch the partitions ps that are not at their end.
func (s *Source[T]) consume(ps []*part) {
	m := map[string]map[int32]kgo.Offset{}
	for _, p := range ps {
		if p.done() {
			continue
		}
		if m[p.topic] == nil {
			m[p.topic] = map[int32]kgo.Offset{}
		}
		m[p.topic][p.partition] = kgo.NewOffset().At(p.next)
	}
	s.cl.AddConsumePartitions(m)
}

// Ctl is the source's control block, polled for barriers between records.
func (s *Source[T]) Ctl() *checkpoint.SourceCtl { return s.ctl }

// Done reports that a bounded source has read every partition to its stop
// offset (an unbounded one never has), or that the job drains
// (checkpoint.SourceCtl.AtEnd).
func (s *Source[T]) Done() bool { return s.done || s.ctl.Draining() }

// Next returns the next record; false when none has come within a few
// milliseconds, when a bounded source is done, and for a while when the
// subtask is ahead of the others by more than its maximum drift (Align).
func (s *Source[T]) Next() (T, bool) {
	var zero T
	if s.ctl.Draining() {
		s.count()
		if s.align != nil {
			s.align.Release()
		}
		return zero, false
	}
	if s.align != nil && s.align.Hold() {
		connector.WaitAligned(s.chain)
		return zero, false
	}
	for {
		for s.ci < len(s.chunks) {
			c := &s.chunks[s.ci]
			if c.at >= len(c.recs) || c.p.paused {
				s.ci++
				continue
			}
			r := c.recs[c.at]
			c.at++
			p := c.p
			if r.Offset < p.next || p.done() {
				continue // read before the checkpoint, or past the end
			}
			if p.stop >= 0 && r.Offset >= p.stop {
				p.next = p.stop // the records before the end were aborted
				continue
			}
			p.next = r.Offset + 1
			s.read += int64(len(r.Value))
			if r.Attrs.IsControl() {
				continue // a transaction's marker: an offset, no record
			}
			rec, ok, err := s.dec.Decode(r.Value)
			if err != nil {
				s.malformed(p, r, err)
				continue
			}
			if !ok {
				continue
			}
			if s.meta != nil {
				s.meta.set(&rec, r)
			}
			s.cur, s.ts, s.off = p, r.Timestamp.UnixMilli(), r.Offset
			if s.uncounted++; s.uncounted == connector.CountEvery {
				s.count()
			}
			if s.drift > 0 {
				if s.unaligned++; s.unaligned == watermarkEvery {
					s.unaligned = 0
					if s.alignPartitions(time.Now()) {
						s.pauseFetches()
					}
				}
			}
			return rec, true
		}
		if s.done || !s.fetch() {
			return zero, false
		}
	}
}

// fetch takes the records the client has fetched, waiting pollWait for
// some when it has none; false when there are none to read.
func (s *Source[T]) fetch() bool {
	// The records of partitions paused by the alignment wait for them to
	// be resumed; the chunks read are let go.
	kept := s.chunks[:0]
	for _, c := range s.chunks {
		if c.at < len(c.recs) {
			kept = append(kept, c)
		}
	}
	clear(s.chunks[len(kept):])
	s.chunks, s.ci = kept, 0
	if s.bounded && s.allDone() {
		s.finish()
		return false
	}
	s.commitGroup()
	if s.discover > 0 && !s.bounded && time.Since(s.lastLook) >= s.discover {
		s.lastLook = time.Now()
		s.discoverPartitions()
	}
	if s.drift > 0 {
		s.alignPartitions(time.Now())
		s.pauseFetches()
		defer s.pauseFetches() // with the records of this poll
	}
	fs := s.cl.PollRecords(nil, 0)
	if fs.Empty() {
		// Waiting for records is idle time, not busy (the status page,
		// pipegen_idle_seconds_total).
		s.count()
		now := time.Now()
		s.chain.Waiting(now, false)
		ctx, cancel := context.WithTimeout(s.ctx, pollWait)
		fs = s.cl.PollRecords(ctx, 0)
		cancel()
		s.chain.Idle(time.Since(now))
	}
	for _, e := range fs.Errors() {
		if errors.Is(e.Err, context.DeadlineExceeded) {
			continue
		}
		if errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, kgo.ErrClientClosed) || s.ctx.Err() != nil {
			fault.Abort(fault.ErrCanceled)
		}
		fault.Abortf("sources.%s[%d]: fetch %s/%d: %w", s.name, s.sub, e.Topic, e.Partition, e.Err)
	}
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		p := s.parts[tp{fp.Topic, fp.Partition}]
		if p == nil {
			return
		}
		if fp.Err == nil {
			// What a read_committed consumer can read: the last stable
			// offset (the high watermark when no transaction is open).
			p.end = fp.LastStableOffset
		}
		if len(fp.Records) > 0 {
			s.chunks = append(s.chunks, chunk{p: p, recs: fp.Records})
		}
	})
	for _, c := range s.chunks {
		if !c.p.paused {
			return true
		}
	}
	return false
}

// discoverPartitions reads, from the earliest offset, the partitions added
// to the topics since the subtask started that it owns.
func (s *Source[T]) discoverPartitions() {
	owned, err := s.listPartitions()
	if err != nil {
		s.env.Logf("sources.%s[%d]: looking for new partitions: %v", s.name, s.sub, err)
		return
	}
	var added []tp
	for _, t := range owned {
		if s.parts[t] == nil {
			added = append(added, t)
		}
	}
	if len(added) == 0 {
		return
	}
	if err := s.begin(added, "earliest", true); err != nil {
		s.env.Logf("sources.%s[%d]: new partitions %v: %v", s.name, s.sub, added, err)
		for _, t := range added {
			delete(s.parts, t)
		}
		return
	}
	var ps []*part
	for _, t := range added {
		ps = append(ps, s.parts[t])
	}
	s.consume(ps)
	s.env.Logf("sources.%s[%d]: reading new partitions %v from their start", s.name, s.sub, added)
}

func (s *Source[T]) allDone() bool {
	for _, p := range s.parts {
		if !p.done() {
			return false
		}
	}
	return true
}

func (s *Source[T]) finish() {
	if s.done {
		return
	}
	s.done = true
	if s.align != nil {
		s.align.Release()
	}
	s.count()
	s.chain.InputEnded()
	switch {
	case s.skipped > 0 && s.deadLetter:
		s.env.Logf("sources.%s[%d]: sent %d malformed records to %s.dead-letter (first: %s)", s.name, s.sub, s.skipped, s.name, s.firstSkip)
	case s.skipped > 0:
		s.env.Logf("sources.%s[%d]: skipped %d malformed records (first: %s)", s.name, s.sub, s.skipped, s.firstSkip)
	}
}

func (s *Source[T]) malformed(p *part, r *kgo.Record, err error) {
	where := fmt.Sprintf("%s@%d", p.tp, r.Offset)
	switch {
	case s.deadLetter && s.dead != nil:
		s.dead(deadLetterOf(s.name, p.tp, r, err))
	case s.deadLetter:
		fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s: on-error dead-letter was set when the program was compiled without a reader of %s.dead-letter: add a sink with input: %s.dead-letter to the pipeline and rebuild", s.name, s.name, s.name)})
	case !s.skip:
		fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s: %s: %w (a malformed record fails the job, and a restart would read it again: set sources.%s.on-error to skip or dead-letter to go on without it)", s.name, where, err, s.name)})
	}
	if s.skipped == 0 {
		s.firstSkip = fmt.Sprintf("%s: %v", where, err)
	}
	s.skipped++
	s.ctl.Malformed()
	s.m.Malformed.Add(1)
}

// OnDeadLetter sets what takes the malformed records of on-error
// dead-letter: each as a JSON object with the source, topic, partition,
// offset, error and the record's value. Generated code passes the emit
// function of the side output NAME.dead-letter.
func (s *Source[T]) OnDeadLetter(fn func(string)) { s.dead = fn }

// deadLetterOf writes a malformed record as one JSON object.
func deadLetterOf(source string, at tp, r *kgo.Record, err error) string {
	b, _ := json.Marshal(struct {
		Source    string `json:"source"`
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
		Error     string `json:"error"`
		Record    string `json:"record"`
	}{source, at.topic, at.partition, r.Offset, err.Error(), string(r.Value)})
	return string(b)
}

func (s *Source[T]) count() {
	s.ctl.Count(s.uncounted)
	s.uncounted = 0
	s.m.BytesIn.Add(uint64(s.read))
	s.read = 0
	s.m.Lag.Store(s.lag())
	if s.ctx.Err() != nil {
		fault.Abort(fault.ErrCanceled)
	}
}

// lag is the number of offsets of the subtask's partitions not read yet,
// as of the latest fetch of each (-1 before any): a bounded source counts
// up to its stop offsets.
func (s *Source[T]) lag() int64 {
	lag := int64(-1)
	for _, p := range s.parts {
		end := p.end
		if p.stop >= 0 {
			end = p.stop
		}
		if end < 0 {
			continue
		}
		lag = max(lag, 0) + max(end-p.next, 0)
	}
	return lag
}

// Timestamp is the Kafka timestamp of the record Next returned last, in
// Unix milliseconds.
func (s *Source[T]) Timestamp() int64 { return s.ts }

// positions returns what the subtask's partitions hold for a checkpoint.
func (s *Source[T]) positions() []saved {
	out := make([]saved, 0, len(s.parts))
	for _, p := range s.parts {
		out = append(out, saved{tp: p.tp, next: p.next, stop: p.stop, maxTS: p.maxTS})
	}
	return out
}

// Snapshot adds the subtask's offsets to a checkpoint.
func (s *Source[T]) Snapshot(snap *checkpoint.Snapshot, node int) {
	ps := s.positions()
	snap.AddSource(node, storage.SourceState{Subtask: s.sub, Position: encodePosition(ps), AtEnd: s.done})
	if s.group != "" && !snap.Final {
		o := kadm.Offsets{}
		for _, p := range ps {
			o.Add(kadm.Offset{Topic: p.topic, Partition: p.partition, At: p.next, LeaderEpoch: -1})
		}
		s.commits = append(s.commits, groupCommit{id: snap.ID, offsets: o})
	}
}

// commitGroup commits to the group the offsets of the newest checkpoint
// that is complete, in the background. Correctness never depends on
// them: they are for tools that watch a group's lag.
func (s *Source[T]) commitGroup() {
	if len(s.commits) == 0 || s.committing.Load() {
		return
	}
	done := s.env.Checkpoints().Committed()
	i := -1
	for k, c := range s.commits {
		if c.id <= done {
			i = k
		}
	}
	if i < 0 {
		return
	}
	c := s.commits[i]
	s.commits = slices.Delete(s.commits, 0, i+1)
	s.committing.Store(true)
	go func() {
		defer s.committing.Store(false)
		ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
		defer cancel()
		if err := s.adm.CommitAllOffsets(ctx, s.group, c.offsets); err != nil && s.ctx.Err() == nil {
			s.env.Logf("sources.%s[%d]: commit the offsets of checkpoint %d to group %s: %v", s.name, s.sub, c.id, s.group, err)
		}
	}()
}

// Recover, deferred by the chain of a Kafka source, adds to a panic the
// partition and offset of the record being processed.
func (s *Source[T]) Recover() {
	if p := recover(); p != nil {
		origin := "sources." + s.name
		if s.cur != nil {
			origin = s.cur.topic + "/" + strconv.Itoa(int(s.cur.partition)) + "@" + strconv.FormatInt(s.off, 10)
		}
		fault.PanicWithOrigin(p, origin)
	}
}
