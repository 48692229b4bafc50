package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// maxOpen bounds the transactions of a sink subtask that wait for their
// checkpoint to complete, and so the transactional ids it uses: one being
// written and one waiting is the normal state; more wait only while
// checkpoints fail.
const maxOpen = 16

// DefaultTransactionTimeout is the transaction timeout of a sink without
// one: Kafka's default transaction.max.timeout.ms, the most a broker
// allows unless configured otherwise.
const DefaultTransactionTimeout = 15 * time.Minute

// batch counts the records produced since a barrier until Kafka has
// acknowledged them, and keeps the first failure.
type batch struct {
	wg      sync.WaitGroup
	err     atomic.Pointer[error]
	promise func(*kgo.Record, error)
}

func newBatch() *batch {
	b := &batch{}
	b.promise = func(_ *kgo.Record, err error) {
		if err != nil {
			b.err.CompareAndSwap(nil, &err)
		}
		b.wg.Done()
	}
	return b
}

func (b *batch) failure() error {
	if e := b.err.Load(); e != nil {
		return *e
	}
	return nil
}

// wait waits until Kafka has acknowledged every record of the batch.
func (b *batch) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return b.failure()
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// txn is one Kafka transaction of a sink subtask: the records between two
// barriers, written by a client of its own under the transactional id of
// its slot.
type txn struct {
	slot int
	storage.Transaction
	cl *kgo.Client
	b  *batch
	// checkpoint is the first checkpoint that covers the transaction, 0
	// until one does (and for the final one).
	checkpoint int64

	mu      sync.Mutex
	flushed bool
}

// preCommit flushes the transaction: once it returns, every record is in
// the topic, waiting for the commit, and the client is closed (the commit
// is a request of its own: commitTxn). It is idempotent: the next
// checkpoint runs it again for a transaction whose checkpoint failed.
func (t *txn) preCommit(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.flushed {
		return nil
	}
	if err := t.cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush transaction %s: %w", t.ID, err)
	}
	if err := t.b.failure(); err != nil {
		return fmt.Errorf("transaction %s: %w", t.ID, err)
	}
	id, epoch, err := t.cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("transaction %s: %w", t.ID, err)
	}
	if id != t.Producer || epoch != t.Epoch {
		return fmt.Errorf("transaction %s: the producer moved from id %d epoch %d to id %d epoch %d while writing: its records cannot be committed", t.ID, t.Producer, t.Epoch, id, epoch)
	}
	t.flushed = true
	t.cl.Close()
	return nil
}

// Sink is one subtask of a Kafka sink. Its guarantee follows the job's
// checkpoint mode:
//
//   - none: records are produced as they come (acks=all), and flushed at
//     the end;
//   - at-least-once: a checkpoint completes only once Kafka has
//     acknowledged every record before its barrier;
//   - exactly-once: Kafka transactions, one per subtask per checkpoint.
//     Records after a barrier go to a new transaction, with a client and a
//     transactional id of its own (PREFIX-SUB-SLOT, the lowest slot not in
//     use). At the barrier the transaction is flushed (pre-commit, by the
//     checkpoint's writer) and recorded in the checkpoint with its producer
//     id and epoch; once the checkpoint is complete the coordinator commits
//     it (commitTxn). After a crash, recovery commits the transactions of
//     the checkpoint it resumes from and aborts every other open one of the
//     prefix (committer.Clean). A consumer with isolation read_committed
//     sees every record once.
type Sink[T any] struct {
	name string
	sub  int
	cp   connector.Checkpoints
	ctx  context.Context
	enc  format.Encoder[T]
	key  func(T) []byte

	topic string
	opts  []kgo.Opt
	mode  string

	// cl and b write in modes none and at-least-once.
	cl *kgo.Client
	b  *batch

	// Exactly-once: the transaction being written, and those waiting for
	// their checkpoint to complete.
	prefix  string
	timeout time.Duration
	cur     *txn
	pending []*txn

	mu     sync.Mutex // guards clients against close at the job's end
	closed bool
	open   []*kgo.Client

	// written counts the bytes of messages since the last Flush, which
	// hands them to the metrics.
	written int
	m       *metrics.Node
}

// NewSink prepares subtask sub of the Kafka sink node, encoding values
// with enc and keys with key (nil: no key).
func NewSink[T any](env connector.Env, node, sub int, enc format.Encoder[T], key func(T) []byte) *Sink[T] {
	n := env.Node(node)
	s := &Sink[T]{name: n.Name, sub: sub, cp: env.Checkpoints(), ctx: env.Context(), enc: enc, key: key, topic: n.Option("topic"), m: env.Metrics().Node(node, sub)}
	fail := func(err error) { fault.Abort(&fault.Fatal{Err: fmt.Errorf("sinks.%s: %w", s.name, err)}) }
	if s.topic == "" {
		fail(errors.New("topic is empty"))
	}
	opts, err := clientOpts(n)
	if err != nil {
		fail(err)
	}
	s.opts = append(opts, kgo.DefaultProduceTopic(s.topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	s.mode = sinkMode(env, n)
	if s.timeout, err = durationOption(n, "transaction-timeout", DefaultTransactionTimeout); err != nil {
		fail(err)
	}
	s.prefix = transactionalPrefix(n)
	if s.mode == config.ExactlyOnce && sub == 0 {
		s.checkTimeout(env)
	}
	if s.mode != config.ExactlyOnce {
		if s.cl, err = kgo.NewClient(s.opts...); err != nil {
			fail(err)
		}
		s.track(s.cl)
		s.b = newBatch()
	}
	context.AfterFunc(s.ctx, s.closeAll)
	return s
}

// sinkMode is how the sink writes: the job's checkpoint mode.
func sinkMode(env connector.Env, n *config.NodeConfig) string {
	if !env.Checkpoints().Enabled() {
		return config.NoCheckpoints
	}
	if cp, ok := env.Checkpoints().(interface{ Mode() string }); ok {
		return cp.Mode()
	}
	return config.ExactlyOnce
}

// checkTimeout warns, as pipegen check does for the compiled values, when
// the transaction timeout is not longer than a transaction may stay open
// in this run: a checkpoint interval and a checkpoint's timeout.
func (s *Sink[T]) checkTimeout(env connector.Env) {
	cp, ok := env.Checkpoints().(interface {
		Settings() config.CheckpointConfig
	})
	if !ok {
		return
	}
	c := cp.Settings()
	if need := c.Interval + c.Timeout; s.timeout <= need {
		env.Logf("warning: sinks.%s: transaction-timeout %s is not longer than a transaction may stay open (checkpoint.interval %s + checkpoint.timeout %s = %s): the broker may abort one that a completed checkpoint holds, and its records would be lost", s.name, s.timeout, c.Interval, c.Timeout, need)
	}
}

// transactionalPrefix is the prefix of a sink's transactional ids.
func transactionalPrefix(n *config.NodeConfig) string {
	if p := n.Option("transactional-id"); p != "" {
		return p
	}
	return "pipegen-" + n.UID
}

// track keeps a client to close when the job ends.
func (s *Sink[T]) track(cl *kgo.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		cl.Close()
		fault.Abort(fault.ErrCanceled)
	}
	s.open = append(s.open, cl)
}

// closeAll closes every client, when the job ends: what is not flushed is
// not committed, and the next run aborts it.
func (s *Sink[T]) closeAll() {
	s.mu.Lock()
	open := s.open
	s.open, s.closed = nil, true
	s.mu.Unlock()
	for _, cl := range open {
		cl.Close()
	}
}

// Write produces one record.
func (s *Sink[T]) Write(v T) {
	val, err := s.enc(nil, v)
	if err != nil {
		fault.Abortf("sinks.%s: encode record: %w", s.name, err)
	}
	r := &kgo.Record{Value: val}
	if s.key != nil {
		r.Key = s.key(v)
	}
	cl, b := s.cl, s.b
	if s.mode == config.ExactlyOnce {
		if s.cur == nil {
			s.begin()
		}
		cl, b = s.cur.cl, s.cur.b
	}
	if err := b.failure(); err != nil {
		fault.Abortf("sinks.%s[%d]: produce to %s: %w", s.name, s.sub, s.topic, err)
	}
	b.wg.Add(1)
	cl.Produce(s.ctx, r, b.promise)
	s.written += len(r.Key) + len(r.Value)
}

// begin opens the transaction that takes the records until the next
// barrier, under the lowest transactional id no waiting transaction has.
func (s *Sink[T]) begin() {
	committed := s.cp.Committed()
	kept := s.pending[:0]
	for _, t := range s.pending {
		if t.checkpoint == 0 || t.checkpoint > committed {
			kept = append(kept, t)
		}
	}
	s.pending = kept
	slot := 0
	for s.slotUsed(slot) {
		slot++
	}
	if slot >= maxOpen {
		fault.Abortf("sinks.%s[%d]: %d Kafka transactions wait for checkpoints to complete: checkpoints keep failing, and each one keeps a transaction open", s.name, s.sub, len(s.pending))
	}
	id := fmt.Sprintf("%s-%d-%d", s.prefix, s.sub, slot)
	cl, err := kgo.NewClient(append(s.opts, kgo.TransactionalID(id), kgo.TransactionTimeout(s.timeout))...)
	if err != nil {
		fault.Abortf("sinks.%s[%d]: %w", s.name, s.sub, err)
	}
	s.track(cl)
	if err := cl.BeginTransaction(); err != nil {
		fault.Abortf("sinks.%s[%d]: begin transaction %s: %w", s.name, s.sub, id, err)
	}
	ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
	defer cancel()
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		if s.ctx.Err() != nil {
			fault.Abort(fault.ErrCanceled)
		}
		fault.Abortf("sinks.%s[%d]: init transactional id %s: %w", s.name, s.sub, id, err)
	}
	s.cur = &txn{slot: slot, Transaction: storage.Transaction{ID: id, Producer: pid, Epoch: epoch}, cl: cl, b: newBatch()}
}

func (s *Sink[T]) slotUsed(slot int) bool {
	for _, t := range s.pending {
		if t.slot == slot {
			return true
		}
	}
	return false
}

// Flush hands the bytes written to the metrics: the clients send records
// in the background, in batches of their own.
func (s *Sink[T]) Flush() {
	s.m.BytesOut.Add(uint64(s.written))
	s.written = 0
}

// PreCommit is the sink's part of a checkpoint. In exactly-once mode the
// transaction written since the last barrier is closed, and the snapshot
// carries every transaction not committed yet (the checkpoint's writer
// flushes them before it acknowledges); in at-least-once mode the writer
// waits until Kafka has acknowledged every record before the barrier.
func (s *Sink[T]) PreCommit(snap *checkpoint.Snapshot, node int) {
	switch s.mode {
	case config.NoCheckpoints:
		return
	case config.AtLeastOnce:
		b := s.b
		s.b = newBatch()
		ctx := s.ctx
		snap.Async(func() error {
			if err := b.wait(ctx); err != nil {
				return fmt.Errorf("sinks.%s[%d]: produce to %s: %w", s.name, s.sub, s.topic, err)
			}
			return nil
		})
		return
	}
	if s.cur != nil {
		s.pending = append(s.pending, s.cur)
		s.cur = nil
	}
	committed := s.cp.Committed()
	var work []*txn
	st := storage.SinkState{Subtask: s.sub}
	for _, t := range s.pending {
		if t.checkpoint != 0 && t.checkpoint <= committed {
			continue
		}
		if !snap.Final && t.checkpoint == 0 {
			t.checkpoint = snap.ID
		}
		st.Transactions = append(st.Transactions, t.Transaction)
		work = append(work, t)
	}
	snap.AddSink(node, st)
	if len(work) > 0 {
		ctx := s.ctx
		snap.Async(func() error {
			for _, t := range work {
				if err := t.preCommit(ctx); err != nil {
					return fmt.Errorf("sinks.%s[%d]: %w", s.name, s.sub, err)
				}
			}
			return nil
		})
	}
}

// End is the sink's last act: in modes none and at-least-once it waits
// until Kafka has every record (exactly-once: the final checkpoint's
// writer flushed the last transaction, and its coordinator commits it).
func (s *Sink[T]) End() {
	if s.mode == config.ExactlyOnce {
		return
	}
	if err := s.b.wait(s.ctx); err != nil {
		fault.Abortf("sinks.%s[%d]: produce to %s: %w", s.name, s.sub, s.topic, err)
	}
}
