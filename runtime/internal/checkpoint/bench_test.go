package checkpoint

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// The benchmarks of this file measure what one checkpoint of a large
// keyed state costs in allocations and time, for the memory backend: a
// state of benchKeys keys of about 70 encoded bytes each, in one subtask.
//
//	go test ./runtime/internal/checkpoint -run '^$' -bench 'Snapshot|Restore' -benchmem -benchtime 3x
//
// B/op is what one snapshot (or restore) allocates; the state itself is
// built before the timer starts.

// benchValue is the state of one key.
type benchValue struct {
	N    int64
	Sum  int64
	Name string
}

var benchCodec = &state.Codec[string, benchValue]{
	Hash:      keygroup.HashString,
	EncodeKey: func(w *codec.Writer, k string) { w.String(k) },
	DecodeKey: func(r *codec.Reader) string { return r.String() },
	EncodeValue: func(w *codec.Writer, v *benchValue) {
		m := w.Begin()
		w.Varint(v.N)
		w.Varint(v.Sum)
		w.String(v.Name)
		w.End(m)
	},
	DecodeValue: func(r *codec.Reader) *benchValue {
		v := new(benchValue)
		n := r.Nested()
		v.N = n.Varint()
		v.Sum = n.Varint()
		v.Name = n.String()
		return v
	},
	KeySchema:   "string",
	ValueSchema: "bench",
}

func benchKey(i int) string { return fmt.Sprintf("key-%09d", i) }

// benchState fills a state of n keys, bound to the key groups of
// subtask 0 of 1.
func benchState(n int) *state.Memory[string, benchValue] {
	st := state.NewMemory[string, benchValue]()
	st.Bind(func(k string) int { return keygroup.Of(keygroup.HashString(k), 128) }, 0, 128)
	for i := range n {
		st.Put(benchKey(i), &benchValue{N: int64(i), Sum: int64(i) * 3, Name: "a name of some forty bytes, give or take"})
	}
	return st
}

// benchConfig is one keyed node of parallelism p and 128 key groups,
// checkpointing to dir.
func benchConfig(dir string, p int) *config.Config {
	return &config.Config{Name: "bench", MaxParallelism: 128,
		Nodes:      []config.NodeConfig{{Name: "agg", UID: "agg", Kind: "aggregate", Parallelism: p}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: dir, Retain: 100}}
}

// nopOutput is a job without transactional sinks.
type nopOutput struct{}

func (nopOutput) Commit(*storage.Manifest) error { return nil }
func (nopOutput) Clean(*storage.Manifest) error  { return nil }

const benchKeys = 1_000_000

// writeBenchCheckpoint takes checkpoint id of st as subtask 0 of 1 and
// commits it.
func writeBenchCheckpoint(tb testing.TB, t *Task, id int64, st *state.Memory[string, benchValue]) int64 {
	cp := t.cp
	if err := cp.st.Prepare(id); err != nil {
		tb.Fatal(err)
	}
	s := t.Begin(id)
	start := time.Now()
	SnapshotMemory(s, 0, st, benchCodec)
	lastBarrier = time.Since(start)
	a := cp.write(s)
	if a.err != nil {
		tb.Fatal(a.err)
	}
	m := &storage.Manifest{ID: id, Job: "bench", MaxParallelism: 128, Mode: config.ExactlyOnce}
	for _, n := range a.nodes {
		n.Name, n.Kind, n.Parallelism = "agg", "aggregate", 1
		m.Nodes = append(m.Nodes, n)
	}
	if err := cp.st.Commit(m); err != nil {
		tb.Fatal(err)
	}
	cp.committed.Store(id)
	return a.bytes
}

// lastBarrier is how long the subtask stopped at the last barrier.
var lastBarrier time.Duration

// BenchmarkSnapshotMemory takes full checkpoints: no checkpoint completes
// in between for a delta to build on.
func BenchmarkSnapshotMemory(b *testing.B) {
	st := benchState(benchKeys)
	dir := b.TempDir()
	cp := New(context.Background(), benchConfig(dir, 1), Options{FS: vfs.Default, Output: nopOutput{}, Logf: b.Logf})
	runtime.GC()
	t := cp.Task(0, 0)
	var bytes int64
	var stall time.Duration
	id := int64(0)
	for b.Loop() {
		id++
		cp.committed.Store(0)
		bytes = writeBenchCheckpoint(b, t, id, st)
		stall = max(stall, lastBarrier)
	}
	b.ReportMetric(float64(bytes), "file-bytes")
	b.ReportMetric(float64(stall.Microseconds()), "max-barrier-µs")
}

// BenchmarkSnapshotMemoryDelta changes 1% of the keys between
// checkpoints, each a delta on top of the one before (consolidated when
// the deltas have grown as large as the full file).
func BenchmarkSnapshotMemoryDelta(b *testing.B) {
	st := benchState(benchKeys)
	dir := b.TempDir()
	cp := New(context.Background(), benchConfig(dir, 1), Options{FS: vfs.Default, Output: nopOutput{}, Logf: b.Logf})
	t := cp.Task(0, 0)
	full := writeBenchCheckpoint(b, t, 1, st)
	runtime.GC()
	var bytes int64
	var stall time.Duration
	id, n := int64(1), 0
	for b.Loop() {
		for range benchKeys / 100 {
			st.Get(benchKey(n%benchKeys)).N++
			n += 97
		}
		id++
		bytes += writeBenchCheckpoint(b, t, id, st)
		stall = max(stall, lastBarrier)
	}
	b.ReportMetric(100*float64(bytes)/float64(b.N)/float64(full), "%-of-full")
	b.ReportMetric(float64(stall.Microseconds()), "max-barrier-µs")
}

func BenchmarkRestoreMemory(b *testing.B) {
	dir := b.TempDir()
	cfg := benchConfig(dir, 1)
	cp := New(context.Background(), cfg, Options{FS: vfs.Default, Output: nopOutput{}, Logf: b.Logf})
	writeBenchCheckpoint(b, cp.Task(0, 0), 1, benchState(benchKeys))
	runtime.GC()
	for b.Loop() {
		cp := New(context.Background(), cfg, Options{FS: vfs.Default, Output: nopOutput{}, Logf: b.Logf})
		if err := cp.Recover("", false, true); err != nil {
			b.Fatal(err)
		}
		st := state.NewMemory[string, benchValue]()
		RestoreMemory(cp.Task(0, 0), 0, st, benchCodec)
		if err := cp.RunRestores(); err != nil {
			b.Fatal(err)
		}
		if st.Len() != benchKeys {
			b.Fatalf("restored %d keys, want %d", st.Len(), benchKeys)
		}
	}
}

// BenchmarkSnapshotKeyed takes checkpoints of a state written whole at
// each one (SnapshotKeyed: sessions, triggers, join buffers), of
// benchKeys keys, after two that size and make its sections' buffers:
// B/op is what a checkpoint allocates from then on.
func BenchmarkSnapshotKeyed(b *testing.B) {
	keys := make([]string, benchKeys)
	values := make([]benchValue, benchKeys)
	for i := range keys {
		keys[i] = benchKey(i)
		values[i] = benchValue{N: int64(i), Sum: int64(i) * 3, Name: "a name of some forty bytes, give or take"}
	}
	cp := New(context.Background(), benchConfig(b.TempDir(), 1), Options{FS: vfs.Default, Output: nopOutput{}, Logf: b.Logf})
	t := cp.Task(0, 0)
	id := int64(0)
	checkpoint := func() int64 {
		id++
		if err := cp.st.Prepare(id); err != nil {
			b.Fatal(err)
		}
		s := t.Begin(id)
		SnapshotKeyed(s, 0, "", keygroup.HashString, "string", "bench", func(sec *state.Sections, keyGroup func(string) int) error {
			for i, k := range keys {
				w := &sec.W[keyGroup(k)-sec.Start]
				m := w.Begin()
				benchCodec.EncodeKey(w, k)
				benchCodec.EncodeValue(w, &values[i])
				w.End(m)
			}
			return nil
		})
		a := cp.write(s)
		if a.err != nil {
			b.Fatal(a.err)
		}
		return a.bytes
	}
	checkpoint()
	checkpoint()
	runtime.GC()
	var bytes int64
	for b.Loop() {
		bytes = checkpoint()
	}
	b.ReportMetric(float64(bytes), "file-bytes")
}
