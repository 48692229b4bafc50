package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

func sourceEnv(t *testing.T, brokers string, p int, opts map[string]string) *connectortest.Env {
	o := map[string]string{"brokers": brokers, "topic": "in", "bounded": "latest"}
	for k, v := range opts {
		o[k] = v
	}
	return connectortest.New(t, p, connectortest.SourceNode("in", "kafka", o))
}

// A bounded source reads what the topic held when it started, every
// record once, and a restore at another parallelism shares the
// partitions out with their offsets: the two runs together read every
// record exactly once.
func TestSourceBoundedRescale(t *testing.T) {
	brokers := cluster(t, 4, "in")
	var want []string
	for p := range int32(4) {
		var vs []string
		for i := range 10 {
			vs = append(vs, fmt.Sprintf("%d-%d", p, i))
		}
		produce(t, brokers, "in", p, vs...)
		want = append(want, vs...)
	}
	e := sourceEnv(t, brokers, 2, nil)
	var got []string
	var states []storage.SourceState
	for sub := range 2 {
		s := NewSource(e, 0, sub, format.LinesFormat())
		for len(got) < 7*(sub+1) {
			if r, ok := s.Next(); ok {
				got = append(got, r)
			}
		}
		states = append(states, storage.SourceState{Subtask: sub, Position: encodePosition(s.positions())})
	}
	// Written after the start: a bounded source does not read it.
	produce(t, brokers, "in", 0, "late")
	e.Cancel(errors.New("stop"))

	e2 := sourceEnv(t, brokers, 3, nil)
	e2.Restore(t, &storage.Manifest{ID: 1, Job: "test", MaxParallelism: 128,
		Nodes: []storage.NodeState{{UID: "in", Name: "in", Kind: "source", Parallelism: 2, Connector: "kafka", Sources: states}}})
	for sub := range 3 {
		s := NewSource(e2, 0, sub, format.LinesFormat())
		got = append(got, connectortest.ReadAll(s)...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read %d records %q,\nwant %d %q", len(got), got, len(want), want)
	}
}

// next reads records from s until it has n or a deadline passes.
func next(t *testing.T, s *Source[string], n int) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %q, want %d records", got, n)
		}
		if r, ok := s.Next(); ok {
			got = append(got, r)
		}
	}
	return got
}

// An unbounded source finds the partitions added to its topic and reads
// them from their start; a restored job reads a partition that its
// checkpoint does not know from its start too.
func TestSourceDiscoversPartitions(t *testing.T) {
	brokers := cluster(t, 1, "in")
	produce(t, brokers, "in", 0, "a", "b")
	e := sourceEnv(t, brokers, 1, map[string]string{"bounded": "none", "discovery-interval": "20ms"})
	s := NewSource(e, 0, 0, format.LinesFormat())
	got := next(t, s, 2)
	adm := kadm.NewClient(client(t, brokers))
	if _, err := adm.CreatePartitions(context.Background(), 1, "in"); err != nil {
		t.Fatal(err)
	}
	produce(t, brokers, "in", 1, "c", "d")
	got = append(got, next(t, s, 2)...)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("read %q", got)
	}
	if !strings.Contains(e.Log(), "reading new partitions [in/1] from their start") {
		t.Errorf("log: %q", e.Log())
	}
}

// The start positions of a fresh start: latest skips what is there, a
// time starts at the first record at or after it, group at the group's
// committed offsets; commit-offsets commits a completed checkpoint's
// offsets to the group.
func TestSourceStartAndGroupOffsets(t *testing.T) {
	brokers := cluster(t, 1, "in")
	produce(t, brokers, "in", 0, "old-1", "old-2")
	mid := time.Now()
	time.Sleep(5 * time.Millisecond)
	produce(t, brokers, "in", 0, "new-1")

	latest := NewSource(sourceEnv(t, brokers, 1, map[string]string{"start": "latest", "bounded": "none"}), 0, 0, format.LinesFormat())
	produce(t, brokers, "in", 0, "after")
	if got := next(t, latest, 1); got[0] != "after" {
		t.Errorf("start latest read %q first", got)
	}
	at := NewSource(sourceEnv(t, brokers, 1, map[string]string{"start": mid.UTC().Format(time.RFC3339Nano)}), 0, 0, format.LinesFormat())
	if got := connectortest.ReadAll(at); !slices.Equal(got, []string{"new-1", "after"}) {
		t.Errorf("start at a time read %q", got)
	}

	e := sourceEnv(t, brokers, 1, map[string]string{"group": "g", "commit-offsets": "true"})
	s := NewSource(e, 0, 0, format.LinesFormat())
	next(t, s, 2)
	snap := e.Ckpt().Task(0, 0).Begin(1)
	s.Snapshot(snap, 0)
	e.Ckpt().CommittedID = 1
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.fetch() // commits in the background once the checkpoint is complete
		offs, err := kadm.NewClient(client(t, brokers)).FetchOffsets(context.Background(), "g")
		if err == nil {
			if o, ok := offs.Lookup("in", 0); ok && o.At == 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group g has no offset 2 for in/0: %v %v", offs, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g := NewSource(sourceEnv(t, brokers, 1, map[string]string{"start": "group", "group": "g"}), 0, 0, format.LinesFormat())
	if got := connectortest.ReadAll(g); !slices.Equal(got, []string{"new-1", "after"}) {
		t.Errorf("start group read %q", got)
	}
}

type keyed struct {
	Key    string    `kafka:"key" json:"-"`
	V      int       `json:"v"`
	Part   int32     `kafka:"partition" json:"-"`
	Offset int64     `kafka:"offset" json:"-"`
	At     time.Time `kafka:"timestamp" json:"-"`
	Topic  string    `kafka:"topic" json:"-"`
}

// Fields tagged kafka:"..." get the message's key and metadata.
func TestSourceMetadataFields(t *testing.T) {
	brokers := cluster(t, 2, "in")
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cl := client(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Partition: 1, Key: []byte("k1"), Value: []byte(`{"v":7}`), Timestamp: at}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s := NewSource(sourceEnv(t, brokers, 1, nil), 0, 0, format.JSONFormat[keyed]())
	got := connectortest.ReadAll(s)
	want := []keyed{{Key: "k1", V: 7, Part: 1, Offset: 0, At: at, Topic: "in"}}
	if !slices.Equal(got, want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	type bad struct {
		N int `kafka:"key"`
	}
	if _, err := metaOf[bad](); err == nil || !strings.Contains(err.Error(), "a field tagged kafka:\"key\" cannot be of type int") {
		t.Errorf("a key field of the wrong type: %v", err)
	}
}

// A read_committed source skips the records of aborted transactions, and a
// bounded one still finds its end, past their markers.
func TestSourceSkipsAbortedTransactions(t *testing.T) {
	brokers := cluster(t, 1, "in")
	cl := client(t, brokers, kgo.TransactionalID("writer"), kgo.DefaultProduceTopic("in"))
	ctx := context.Background()
	for _, tx := range []struct {
		values []string
		commit kgo.TransactionEndTry
	}{{[]string{"a", "b"}, kgo.TryCommit}, {[]string{"x", "y"}, kgo.TryAbort}, {[]string{"c"}, kgo.TryCommit}, {[]string{"z"}, kgo.TryAbort}} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range tx.values {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, tx.commit); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSource(sourceEnv(t, brokers, 1, nil), 0, 0, format.LinesFormat())
	if got := connectortest.ReadAll(s); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("read %q, want the committed a b c", got)
	}
}

// A live job's checkpoint restored with bounded: latest reads to the end
// the partitions have now and stops; a bounded job's checkpoint restored
// live reads on past its old end.
func TestSourceBoundedChangesOnRestore(t *testing.T) {
	brokers := cluster(t, 1, "in")
	produce(t, brokers, "in", 0, "a", "b", "c", "d")
	restore := func(bounded string, states []storage.SourceState) *Source[string] {
		e := sourceEnv(t, brokers, 1, map[string]string{"bounded": bounded})
		e.Restore(t, &storage.Manifest{ID: 1, Job: "test", MaxParallelism: 128,
			Nodes: []storage.NodeState{{UID: "in", Name: "in", Kind: "source", Parallelism: 1, Connector: "kafka", Sources: states}}})
		return NewSource(e, 0, 0, format.LinesFormat())
	}
	live := NewSource(sourceEnv(t, brokers, 1, map[string]string{"bounded": "none"}), 0, 0, format.LinesFormat())
	next(t, live, 2)
	saved := []storage.SourceState{{Subtask: 0, Position: encodePosition(live.positions())}}

	bounded := restore("latest", saved)
	if got := connectortest.ReadAll(bounded); !slices.Equal(got, []string{"c", "d"}) {
		t.Fatalf("bounded after a live checkpoint read %q, want c d", got)
	}
	produce(t, brokers, "in", 0, "e")
	saved = []storage.SourceState{{Subtask: 0, Position: encodePosition(bounded.positions()), AtEnd: true}}
	if got := next(t, restore("none", saved), 1); got[0] != "e" {
		t.Fatalf("live after a bounded checkpoint read %q, want e", got)
	}
}

// Several topics, a csv value, and a cluster that wants SASL (SCRAM), the
// password read from the environment variable sasl-password-env names.
func TestSourceTopicsCSVAndSASL(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a", "b"), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "pipegen", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()[0]
	t.Setenv("PIPEGEN_TEST_KAFKA_PASSWORD", "s3cret")
	auth := map[string]string{"sasl-mechanism": "scram-sha-256", "sasl-user": "pipegen", "sasl-password-env": "PIPEGEN_TEST_KAFKA_PASSWORD"}
	w, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.SASL(scram.Auth{User: "pipegen", Pass: "s3cret"}.AsSha256Mechanism()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var recs []*kgo.Record
	for i, topic := range []string{"a", "a", "b", "b"} {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte(fmt.Sprintf("%s;%d", topic, i))})
	}
	if err := w.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Topic string
		N     int
	}
	csv, err := format.CSVFormat[row](';', false)
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{"topic": "a,b", "format": "csv"}
	for k, v := range auth {
		opts[k] = v
	}
	e := sourceEnv(t, brokers, 2, opts)
	var got []row
	for sub := range 2 {
		got = append(got, connectortest.ReadAll(NewSource(e, 0, sub, csv))...)
	}
	slices.SortFunc(got, func(x, y row) int { return x.N - y.N })
	want := []row{{"a", 0}, {"a", 1}, {"b", 2}, {"b", 3}}
	if !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}

	// Without the password the source fails, saying why.
	t.Setenv("PIPEGEN_TEST_KAFKA_PASSWORD", "wrong")
	err = connectortest.Catch(func() { NewSource(sourceEnv(t, brokers, 1, opts), 0, 0, csv) })
	if err == nil {
		t.Fatal("a wrong password read the topic")
	}
	t.Logf("with a wrong password: %v", err)
}

// An unbounded source's lag is the offsets of its partitions not read yet,
// as of its latest fetch: what it has not read of a topic written before
// it started, then none once it has read everything; the metric follows.
func TestSourceLag(t *testing.T) {
	brokers := cluster(t, 2, "in")
	var vs []string
	for i := range 3000 {
		vs = append(vs, fmt.Sprint(i))
	}
	produce(t, brokers, "in", 0, vs...)
	produce(t, brokers, "in", 1, vs[:500]...)
	e := sourceEnv(t, brokers, 1, map[string]string{"bounded": "none"})
	s := NewSource(e, 0, 0, format.LinesFormat())
	if got := s.lag(); got != -1 {
		t.Errorf("lag before any fetch = %d, want -1 (unknown)", got)
	}
	next(t, s, 1000)
	// A fetch may have returned one partition only: once both have been
	// fetched, the lag counts from both ends.
	for s.parts[tp{"in", 0}].end < 0 || s.parts[tp{"in", 1}].end < 0 {
		next(t, s, 1)
	}
	read := int64(0)
	for _, p := range s.parts {
		read += p.next
	}
	if got, want := s.lag(), 3500-read; got != want {
		t.Errorf("lag after reading %d of 3500 records = %d, want %d", read, got, want)
	}
	next(t, s, int(3500-read))
	s.count()
	if got := s.m.Lag.Load(); got != 0 {
		t.Errorf("lag metric after reading everything = %d, want 0", got)
	}
	produce(t, brokers, "in", 1, "one more")
	next(t, s, 1)
	s.count()
	if got := s.m.Lag.Load(); got != 0 {
		t.Errorf("lag metric after reading the record written later = %d, want 0", got)
	}
}

// With on-error dead-letter a malformed value goes, as a JSON object
// naming its topic, partition and offset, to what OnDeadLetter set, in its
// place among the records; the good ones are read as usual.
func TestSourceDeadLetters(t *testing.T) {
	type rec struct{ N int }
	brokers := cluster(t, 1, "in")
	produce(t, brokers, "in", 0, `{"N":1}`, `{"N":`, `{"N":3}`, `"three"`)
	e := sourceEnv(t, brokers, 1, map[string]string{"on-error": "dead-letter"})
	s := NewSource(e, 0, 0, format.JSONFormat[rec]())
	var got []string
	s.OnDeadLetter(func(d string) { got = append(got, "dead "+d) })
	for {
		r, ok := s.Next()
		if ok {
			got = append(got, fmt.Sprint("rec ", r.N))
			continue
		}
		if s.Done() {
			break
		}
	}
	if len(got) != 4 || got[0] != "rec 1" || got[2] != "rec 3" {
		t.Fatalf("read %q, want rec 1, a dead letter, rec 3, a dead letter", got)
	}
	for i, offset := range map[int]int64{1: 1, 3: 3} {
		var d struct {
			Source, Topic, Error, Record string
			Partition                    int32
			Offset                       int64
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(got[i], "dead ")), &d); err != nil {
			t.Fatalf("dead letter %q: %v", got[i], err)
		}
		if d.Source != "in" || d.Topic != "in" || d.Partition != 0 || d.Offset != offset || d.Error == "" || d.Record == "" {
			t.Errorf("dead letter %q: want source in, topic in, partition 0, offset %d, an error and the record", got[i], offset)
		}
	}
	if !strings.Contains(e.Log(), "sent 2 malformed records to in.dead-letter") {
		t.Errorf("log %q does not count the dead letters", e.Log())
	}
}

// TestSourceWaitIsIdle: a Kafka source subtask with nothing to read waits
// in the client's poll, and its chain counts that time as idle, not busy
// (the status page, pipegen_idle_seconds_total).
func TestSourceWaitIsIdle(t *testing.T) {
	brokers := cluster(t, 1, "in")
	env := sourceEnv(t, brokers, 1, map[string]string{"bounded": ""}) // unbounded: it waits for records
	chain := env.Metrics().Meter(0, 0)
	src := NewSource(env, 0, 0, format.LinesFormat())
	start := time.Now()
	for time.Since(start) < 300*time.Millisecond {
		if _, ok := src.Next(); ok {
			t.Fatal("a record from an empty topic")
		}
	}
	tm := chain.Times()
	if tm.Idle < 0.2 || tm.Busy > tm.Idle {
		t.Errorf("waiting 0.3 s for records of an empty topic: idle %.3f s, busy %.3f s; want most of it idle", tm.Idle, tm.Busy)
	}
}
