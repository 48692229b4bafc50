package kafka

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
)

// alignedSubtask is a subtask of a Kafka source of lines that are event
// times in milliseconds, with its watermarks (no out-of-orderness) and the
// times it read.
type alignedSubtask struct {
	src  *Source[string]
	wm   *Watermarks
	read []int64
}

// readUntilHeld reads the subtask as its generated loop would, until it is
// held by the alignment or done, and reports whether it was held. Next
// also returns nothing while a fetch is on its way: it reads on then.
func (s *alignedSubtask) readUntilHeld(t *testing.T) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		line, ok := s.src.Next()
		if !ok {
			switch {
			case s.src.Done():
				return false
			case s.src.align.Hold():
				return true
			case time.Now().After(deadline):
				t.Fatalf("neither held nor done after 10 s, %d records read", len(s.read))
			}
			continue
		}
		ts, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		s.read = append(s.read, ts)
		s.wm.Observe(ts)
	}
}

// TestSourceAlignment reads the two subtasks of a bounded Kafka source with
// timestamps.max-drift 100ms in turn, each owning one partition of times a
// millisecond apart, one of 1000 and one of 3000: a subtask stops reading
// once its watermark is more than the drift ahead of the other's, goes on
// as the other catches up, and reads to its end once the other has ended.
// Every record is read once, in order.
func TestSourceAlignment(t *testing.T) {
	const drift = 100
	brokers := cluster(t, 2, "in")
	lens := []int{1000, 3000}
	for p, n := range lens {
		var vs []string
		for v := range n {
			vs = append(vs, fmt.Sprint(v))
		}
		produce(t, brokers, "in", int32(p), vs...)
	}
	n := connectortest.SourceNode("in", "kafka", map[string]string{"brokers": brokers, "topic": "in", "bounded": "latest"})
	n.Watermark = config.WatermarkConfig{MaxDrift: drift * time.Millisecond}
	env := &connectortest.SharedEnv{Env: connectortest.New(t, 2, n)}
	subs := make([]*alignedSubtask, 2)
	for i := range subs {
		src := NewSource(env, 0, i, format.LinesFormat())
		s := &alignedSubtask{src: src, wm: newWatermarks(src, n.Watermark)}
		src.Align(0, s.wm)
		subs[i] = s
	}
	ahead := func(a, b *alignedSubtask) int64 { return a.read[len(a.read)-1] - b.read[len(b.read)-1] }
	// Watermarks come every 64 records, a record a millisecond here: the
	// one held has read at most that much past the drift.
	held := func(a, b *alignedSubtask) {
		t.Helper()
		if len(b.read) == 0 {
			return // the other has no watermark yet
		}
		if d := ahead(a, b); d <= drift || d > drift+2*64 {
			t.Fatalf("a subtask stopped %d ms ahead of the other: want just over the drift, %d ms", d, drift)
		}
	}
	turns := 0
	for ; !subs[0].src.Done() || !subs[1].src.Done(); turns++ {
		if turns > 200 {
			t.Fatalf("not done after %d turns: %d and %d records read", turns, len(subs[0].read), len(subs[1].read))
		}
		for i, s := range subs {
			if !s.src.Done() && s.readUntilHeld(t) {
				held(s, subs[1-i])
			}
		}
	}
	if turns < 4 {
		t.Errorf("the subtasks took %d turns: want each held several times with a drift of %d ms", turns, drift)
	}
	var all []int64
	for _, s := range subs {
		if !slices.IsSorted(s.read) {
			t.Errorf("a subtask read its partition out of order")
		}
		all = append(all, s.read...)
	}
	slices.Sort(all)
	var want []int64
	for _, n := range lens {
		for v := range n {
			want = append(want, int64(v))
		}
	}
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Errorf("read %d records, want each of the %d once", len(all), len(want))
	}
}

// TestSourcePartitionAlignment reads a bounded Kafka source of one subtask
// and two partitions, with timestamps.max-drift 100ms: partition 0 holds
// event times from 0 to 6 s, partition 1 from 5 s on. Records of 4 KiB make
// a fetch of a partition about 240 of them (the client's 1 MiB a
// partition), so that the partitions' fetches come in turns: without the
// alignment partition 1 is read beside partition 0, 5 s ahead of it. With
// it, partition 1 waits, its fetched records unread, until partition 0
// comes within the drift. Every record is read once, in order.
func TestSourcePartitionAlignment(t *testing.T) {
	const (
		drift = 100
		n     = 1500
		start = 5000 // partition 1's first event time
	)
	brokers := cluster(t, 2, "in")
	// Letters at random, which the producer's compression cannot shrink.
	rnd := rand.New(rand.NewPCG(1, 2))
	pad := make([]byte, 4<<10)
	var want [2][]int64
	for p := range want {
		var vs []string
		for i := range n {
			ts := int64(i * 4) // partition 0: 0 to 6 s
			if p == 1 {
				ts = start + int64(i)
			}
			want[p] = append(want[p], ts)
			for j := range pad {
				pad[j] = 'a' + byte(rnd.IntN(26))
			}
			vs = append(vs, fmt.Sprint(ts, " ", string(pad)))
		}
		produce(t, brokers, "in", int32(p), vs...)
	}
	node := connectortest.SourceNode("in", "kafka", map[string]string{"brokers": brokers, "topic": "in", "bounded": "latest"})
	node.Watermark = config.WatermarkConfig{MaxDrift: drift * time.Millisecond}
	env := connectortest.New(t, 1, node)
	src := NewSource(env, 0, 0, format.LinesFormat())
	wm := newWatermarks(src, node.Watermark)
	src.Align(0, wm)

	var read [2][]int64
	early := 0              // records of partition 1 read while partition 0 was more than the drift behind
	mostPaused := int64(-1) // the most partitions the metrics said were paused
	mostHeld := 0           // the most fetches of a paused partition held at once
	deadline := time.Now().Add(20 * time.Second)
	for !src.Done() {
		line, ok := src.Next()
		if !ok {
			if time.Now().After(deadline) {
				t.Fatalf("not done after 20 s: %d and %d records read", len(read[0]), len(read[1]))
			}
			continue
		}
		ts, err := strconv.ParseInt(line[:strings.IndexByte(line, ' ')], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		p := src.current().partition
		read[p] = append(read[p], ts)
		wm.Observe(ts)
		mostPaused = max(mostPaused, env.Metrics().Figures(0, 0).Paused)
		// A paused partition's fetched records wait in at most
		// heldFetches fetches: the client fetches no more of it then.
		held := 0
		for _, c := range src.chunks {
			if c.p.paused && c.at < len(c.recs) {
				held++
			}
		}
		mostHeld = max(mostHeld, held)
		// Partition 0's records are 4 ms apart: a few of them of slack.
		if p == 1 && len(read[0]) < n && (len(read[0]) == 0 || ts-read[0][len(read[0])-1] > drift+20) {
			early++
		}
	}
	for p := range read {
		if !slices.Equal(read[p], want[p]) {
			t.Errorf("partition %d: read %d records, want each of the %d once, in order", p, len(read[p]), len(want[p]))
		}
	}
	// The partitions are compared every watermarkEvery records: partition
	// 1 reads at most that many before it is paused, and as many past the
	// drift each time it is resumed. Paused only between fetches, it read
	// about 300; read beside partition 0 without the alignment, nearly
	// all 1500.
	if mostHeld < 1 || mostHeld > heldFetches {
		t.Errorf("held up to %d fetches of the paused partition: want 1 to %d", mostHeld, heldFetches)
	}
	if mostPaused != 1 {
		t.Errorf("the metrics said at most %d partitions were paused: want partition 1, one", mostPaused)
	}
	if early > 3*watermarkEvery {
		t.Errorf("%d records of partition 1 read while partition 0 was more than the drift behind: want at most a few times %d", early, watermarkEvery)
	}
	t.Logf("%d records of partition 1 read ahead of the drift", early)
}

// TestSourceEmptyPartitionHoldsTheOthers: with timestamps.max-drift and no
// idle timeout, a partition that has no record holds the others back (as
// it holds event time back): the subtask reads a few records of the other
// partition and then waits, and the job's log names the empty partition.
// With an idle timeout the empty partition goes idle, and the other is
// read to its end.
func TestSourceEmptyPartitionHoldsTheOthers(t *testing.T) {
	brokers, total := timesTopic(t, 2)
	for _, idle := range []time.Duration{0, 20 * time.Millisecond} {
		node := connectortest.SourceNode("in", "kafka", map[string]string{"brokers": brokers, "topic": "in"})
		node.Watermark = config.WatermarkConfig{MaxDrift: 100 * time.Millisecond, IdleTimeout: idle}
		env := connectortest.New(t, 1, node)
		src := NewSource(env, 0, 0, format.LinesFormat())
		wm := newWatermarks(src, node.Watermark)
		wm.stuck, wm.warnAfter = src.stuck, 50*time.Millisecond
		src.Align(0, wm)
		read := readFor(t, src, wm, total, 500*time.Millisecond)
		log := env.Log()
		if idle == 0 {
			if read > 2*watermarkEvery {
				t.Errorf("read %d records of partition 0 while partition 1 has none: want it held back after about %d", read, watermarkEvery)
			}
			if !strings.Contains(log, "partition in/1 has had no record") || !strings.Contains(log, "max-drift") || !strings.Contains(log, "sources.in.timestamps.idle-timeout") {
				t.Errorf("the log does not name the empty partition, the drift and the idle timeout:\n%s", log)
			}
		} else {
			if read != total {
				t.Errorf("with an idle timeout, read %d records of partition 0, want all %d", read, total)
			}
			if strings.Contains(log, "has had no record") {
				t.Errorf("told of an empty partition with an idle timeout set:\n%s", log)
			}
		}
	}
}

// TestSourceWithoutPartitionsIsIdle: at parallelism 2 over a topic of one
// partition, the subtask that owns no partition is idle at once, without
// an idle timeout: it holds neither the watermark downstream nor, with
// timestamps.max-drift, the other subtask back, which reads all its
// records.
func TestSourceWithoutPartitionsIsIdle(t *testing.T) {
	brokers, total := timesTopic(t, 1)
	n := connectortest.SourceNode("in", "kafka", map[string]string{"brokers": brokers, "topic": "in"})
	n.Watermark = config.WatermarkConfig{MaxDrift: 100 * time.Millisecond}
	env := &connectortest.SharedEnv{Env: connectortest.New(t, 2, n)}
	subs := make([]*alignedSubtask, 2)
	empty := -1
	for i := range subs {
		src := NewSource(env, 0, i, format.LinesFormat())
		s := &alignedSubtask{src: src, wm: newWatermarks(src, n.Watermark)}
		src.Align(0, s.wm)
		subs[i] = s
		if len(src.parts) == 0 {
			empty = i
		}
	}
	if empty < 0 {
		t.Fatal("both subtasks own a partition of a topic of one")
	}
	e := subs[empty]
	if _, ok := e.src.Next(); ok {
		t.Fatal("a record from a subtask without partitions")
	}
	if !e.wm.Idle(time.Now()) {
		t.Fatal("the subtask without partitions is not idle")
	}
	if e.wm.Idle(time.Now()) {
		t.Fatal("the subtask without partitions said it is idle twice")
	}
	other := subs[1-empty]
	if read := readFor(t, other.src, other.wm, total, 2*time.Second); read != total {
		t.Errorf("the subtask with the partition read %d of its %d records: held back by the one without", read, total)
	}
}

// timesTopic starts a cluster whose topic "in" has parts partitions, and
// puts lines into partition 0 that are event times 10 ms apart; it returns
// the brokers and how many lines it put.
func timesTopic(t *testing.T, parts int32) (brokers string, n int) {
	t.Helper()
	brokers = cluster(t, parts, "in")
	var vs []string
	for i := range 1000 {
		vs = append(vs, fmt.Sprint(i*10))
	}
	produce(t, brokers, "in", 0, vs...)
	return brokers, len(vs)
}

// readFor reads a source subtask of event-time lines as its generated loop
// would, until it has read want records or d has passed, and returns how
// many it read. While Next returns nothing the watermarks look at
// whether the subtask is idle.
func readFor(t *testing.T, src *Source[string], wm *Watermarks, want int, d time.Duration) int {
	t.Helper()
	read := 0
	for end := time.Now().Add(d); time.Now().Before(end) && read < want; {
		line, ok := src.Next()
		if !ok {
			wm.Pending()
			wm.Idle(time.Now())
			continue
		}
		ts, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		wm.Observe(ts)
		read++
	}
	return read
}
