package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/storage"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// cluster starts an in-process Kafka cluster (kfake) with the given topics
// of n partitions each.
func cluster(t *testing.T, n int32, topics ...string) string {
	t.Helper()
	return clusterOf(t, nil, n, topics...)
}

// clusterOf is cluster emulating the Kafka versions vs (nil: the newest).
func clusterOf(t *testing.T, vs *kversion.Versions, n int32, topics ...string) string {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(n, topics...)}
	if vs != nil {
		opts = append(opts, kfake.MaxVersions(vs))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func client(t *testing.T, brokers string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes values to partition p of topic, each its own record.
func produce(t *testing.T, brokers, topic string, p int32, values ...string) {
	t.Helper()
	cl := client(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readCommitted returns what a read_committed consumer sees in topic, all
// partitions, up to the last stable offsets.
func readCommitted(t *testing.T, brokers, topic string) []string {
	t.Helper()
	return readTopic(t, brokers, topic, kgo.ReadCommitted())
}

func readTopic(t *testing.T, brokers, topic string, iso kgo.IsolationLevel) []string {
	t.Helper()
	cl := client(t, brokers, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords())
	adm := client(t, brokers)
	ends := endOffsets(t, adm, topic, iso)
	var out []string
	pos := map[int32]int64{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		caught := true
		for p, end := range ends {
			if pos[p] < end {
				caught = false
			}
		}
		if caught {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading %s: stuck at %v, ends %v", topic, pos, ends)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				out = append(out, string(r.Value))
			}
		})
	}
	return out
}

func endOffsets(t *testing.T, cl *kgo.Client, topic string, iso kgo.IsolationLevel) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(cl)
	list := adm.ListEndOffsets
	if iso == kgo.ReadCommitted() {
		list = adm.ListCommittedOffsets
	}
	listed, err := list(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		ends[o.Partition] = o.Offset
	})
	return ends
}

func sinkEnv(t *testing.T, brokers string, p int, opts map[string]string) *connectortest.Env {
	o := map[string]string{"brokers": brokers, "topic": "out"}
	for k, v := range opts {
		o[k] = v
	}
	return connectortest.New(t, p, connectortest.SinkNode("out", "kafka", o))
}

// snapshot takes subtask sub's part of checkpoint id as the writer would
// and returns its sink states.
func snapshot(t *testing.T, e *connectortest.Env, pre func(*checkpoint.Snapshot), id int64, sub int) []storage.SinkState {
	t.Helper()
	s := e.Ckpt().Task(0, sub).Begin(id)
	pre(s)
	if err := s.RunAsync(); err != nil {
		t.Fatal(err)
	}
	return s.Sinks()
}

func TestSinkExactlyOnceCommitsWithTheCheckpoint(t *testing.T) {
	brokers := cluster(t, 2, "out")
	e := sinkEnv(t, brokers, 1, nil)
	s := NewSink(e, 0, 0, format.EncodeString, func(v string) []byte { return []byte(v) })
	s.Write("a")
	s.Write("b")
	st := snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 1, 0)
	if len(st) != 1 || len(st[0].Transactions) != 1 {
		t.Fatalf("sink states %+v", st)
	}
	if got := readTopic(t, brokers, "out", kgo.ReadUncommitted()); len(got) != 2 {
		t.Fatalf("flushed records: %q", got)
	}
	if got := readCommitted(t, brokers, "out"); len(got) != 0 {
		t.Fatalf("visible before the commit: %q", got)
	}
	// Records after the barrier go to a transaction of their own.
	s.Write("c")
	var c committer
	if err := c.Commit(nil, e.Node(0), st[0]); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(nil, e.Node(0), st[0]); err != nil {
		t.Fatalf("committing again: %v", err)
	}
	wantCommitted(t, brokers, "out", "a", "b")
	// A crash once "c" is in the topic: its transaction is open. Recovery
	// aborts it.
	waitUncommitted(t, brokers, "out", 3)
	e.Cancel(errors.New("crash"))
	time.Sleep(50 * time.Millisecond)
	removed, err := c.Clean(nil, e.Node(0), &storage.NodeState{UID: "out", Sinks: st})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(removed, "1 open Kafka transactions") {
		t.Errorf("clean: %q", removed)
	}
	wantCommitted(t, brokers, "out", "a", "b")
}

// A crash between the manifest and the commit: the recovery commits the
// checkpoint's transaction with a request of its own.
func TestSinkRecoveryCommitsThePreCommittedTransaction(t *testing.T) {
	brokers := cluster(t, 1, "out")
	e := sinkEnv(t, brokers, 2, nil)
	var states []storage.SinkState
	for sub := range 2 {
		s := NewSink(e, 0, sub, format.EncodeString, nil)
		for i := range 3 {
			s.Write(fmt.Sprintf("%d-%d", sub, i))
		}
		states = append(states, snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 7, sub)...)
		s.Write(fmt.Sprintf("%d-after", sub))
	}
	e.Cancel(errors.New("crash"))
	time.Sleep(50 * time.Millisecond)

	// The next process.
	e2 := sinkEnv(t, brokers, 2, nil)
	var c committer
	for _, st := range states {
		if err := c.Commit(nil, e2.Node(0), st); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Clean(nil, e2.Node(0), &storage.NodeState{UID: "out", Sinks: states}); err != nil {
		t.Fatal(err)
	}
	wantCommitted(t, brokers, "out", "0-0", "0-1", "0-2", "1-0", "1-1", "1-2")
	// The new run's sinks write under the same ids, fenced anew.
	s := NewSink(e2, 0, 0, format.EncodeString, nil)
	s.Write("new")
	st := snapshot(t, e2, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 8, 0)
	if err := c.Commit(nil, e2.Node(0), st[0]); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, brokers, "out"); len(got) != 7 {
		t.Fatalf("after the new run: %q", got)
	}
}

// A transaction that times out before its checkpoint commits it is lost:
// the commit says so instead of pretending.
func TestSinkTransactionTimeoutIsReported(t *testing.T) {
	brokers := cluster(t, 1, "out")
	e := sinkEnv(t, brokers, 1, map[string]string{"transaction-timeout": "200ms"})
	e.Config.Checkpoint.Interval, e.Config.Checkpoint.Timeout = 100*time.Millisecond, time.Second
	s := NewSink(e, 0, 0, format.EncodeString, nil)
	if !strings.Contains(e.Log(), "warning: sinks.out: transaction-timeout 200ms is not longer than a transaction may stay open (checkpoint.interval 100ms + checkpoint.timeout 1s = 1.1s)") {
		t.Errorf("no warning at the start: %q", e.Log())
	}
	s.Write("a")
	st := snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 1, 0)
	time.Sleep(600 * time.Millisecond)
	var c committer
	err := c.Commit(nil, e.Node(0), st[0])
	if !errors.Is(err, ErrTransactionAborted) {
		t.Fatalf("commit after the timeout: %v", err)
	}
	if got := readCommitted(t, brokers, "out"); len(got) != 0 {
		t.Fatalf("committed %q", got)
	}
}

func TestSinkAtLeastOnceWaitsForAcks(t *testing.T) {
	brokers := cluster(t, 1, "out")
	e := sinkEnv(t, brokers, 1, nil)
	e.Config.Checkpoint.Mode = config.AtLeastOnce
	s := NewSink(e, 0, 0, format.EncodeString, nil)
	for i := range 100 {
		s.Write(fmt.Sprint(i))
	}
	st := snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 1, 0)
	if len(st) != 0 {
		t.Fatalf("at-least-once records no transactions: %+v", st)
	}
	if got := readCommitted(t, brokers, "out"); len(got) != 100 {
		t.Fatalf("acknowledged at the barrier: %d records", len(got))
	}
}

// A job restored from an older checkpoint commits that checkpoint's
// transactions again: they were committed long ago, and their ids have
// carried later transactions since. The commit is recognised as done:
// nothing fails, and nothing is committed twice.
func TestSinkCommitOfAnOlderCheckpoint(t *testing.T) {
	brokers := cluster(t, 1, "out")
	e := sinkEnv(t, brokers, 1, nil)
	s := NewSink(e, 0, 0, format.EncodeString, nil)
	var c committer
	var states []storage.SinkState
	for i, v := range []string{"a", "b", "c"} {
		s.Write(v)
		st := snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, int64(i+1), 0)
		if err := c.Commit(nil, e.Node(0), st[0]); err != nil {
			t.Fatal(err)
		}
		e.Ckpt().CommittedID = int64(i + 1)
		states = append(states, st[0])
	}
	if states[0].Transactions[0].ID != states[2].Transactions[0].ID {
		t.Fatalf("transactional ids %v and %v: the test wants one used again", states[0].Transactions, states[2].Transactions)
	}
	// A transaction open under the same id: committing an old one must
	// not commit it.
	s.Write("d")
	snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 4, 0)
	// Recovery from checkpoint 1, then from 2.
	for _, st := range states[:2] {
		if err := c.Commit(nil, e.Node(0), st); err != nil {
			t.Fatalf("committing %v again: %v", st.Transactions, err)
		}
	}
	wantCommitted(t, brokers, "out", "a", "b", "c")
}

// Against Kafka 2.8: no ListTransactions (recovery fences every id the
// subtasks may have used) and no epoch bump at the end of a transaction
// (every transaction's client initialises its id anew, which bumps it).
// Recovery commits the checkpoint's transaction and aborts the open one;
// committing an older checkpoint again commits nothing newer.
func TestSinkOnKafka28(t *testing.T) {
	brokers := clusterOf(t, kversion.V2_8_0(), 1, "out")
	e := sinkEnv(t, brokers, 1, nil)
	s := NewSink(e, 0, 0, format.EncodeString, nil)
	var c committer
	s.Write("a")
	st1 := snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 1, 0)
	if err := c.Commit(nil, e.Node(0), st1[0]); err != nil {
		t.Fatal(err)
	}
	e.Ckpt().CommittedID = 1
	s.Write("b")
	st2 := snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 2, 0)
	s.Write("c") // open when the job crashes
	waitUncommitted(t, brokers, "out", 3)
	e.Cancel(errors.New("crash"))
	time.Sleep(50 * time.Millisecond)

	e2 := sinkEnv(t, brokers, 1, nil)
	for _, st := range [][]storage.SinkState{st1, st2} { // an older checkpoint's first
		if err := c.Commit(nil, e2.Node(0), st[0]); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := c.Clean(nil, e2.Node(0), &storage.NodeState{UID: "out", Sinks: st2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean: %s", removed)
	wantCommitted(t, brokers, "out", "a", "b")
}

// A zombie, an instance of an earlier run that still writes after a new
// run recovered, is fenced: its transaction was aborted by the recovery,
// and its pre-commit fails, so no checkpoint of it can complete.
func TestSinkZombieIsFenced(t *testing.T) {
	brokers := cluster(t, 1, "out")
	zombieEnv := sinkEnv(t, brokers, 1, nil)
	zombie := NewSink(zombieEnv, 0, 0, format.EncodeString, nil)
	zombie.Write("x")
	waitUncommitted(t, brokers, "out", 1)
	// The new run's recovery, from no checkpoint.
	var c committer
	if _, err := c.Clean(nil, sinkEnv(t, brokers, 1, nil).Node(0), nil); err != nil {
		t.Fatal(err)
	}
	zombie.Write("y")
	s := zombieEnv.Ckpt().Task(0, 0).Begin(1)
	zombie.PreCommit(s, 0)
	if err := s.RunAsync(); err == nil {
		t.Fatal("the zombie pre-committed its transaction after it was fenced")
	} else {
		t.Logf("the zombie's pre-commit: %v", err)
	}
	if got := readCommitted(t, brokers, "out"); len(got) != 0 {
		t.Fatalf("committed %q", got)
	}
}

// waitUncommitted waits until topic holds n records, committed or not.
func waitUncommitted(t *testing.T, brokers, topic string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(readTopic(t, brokers, topic, kgo.ReadUncommitted())) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %d records", topic, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantCommitted fails t unless a read_committed consumer reads want of
// topic, in any order.
func wantCommitted(t *testing.T, brokers, topic string, want ...string) {
	t.Helper()
	got := readCommitted(t, brokers, topic)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("committed %q, want %q", got, want)
	}
}
