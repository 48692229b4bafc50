package pebblestate

import (
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// intervalJoin is what the benchmark needs of either backend's join.
type intervalJoin interface {
	AddLeft(k int64, l value, ts, inputWatermark int64, emit func(value, string, int64)) bool
	AddRight(k int64, r string, ts, inputWatermark int64, emit func(value, string, int64)) bool
	Advance(wm int64)
}

// BenchmarkIntervalJoinCheckpoint measures what a checkpoint of an
// interval join writes, and how long the subtask stops at the barrier,
// on each backend: about 100k records buffered (one per millisecond of
// event time, on 20k keys, both sides kept 100 s), of which 1% are new and
// 1% dropped by the watermark between two checkpoints. add-ns/record is
// the cost of a record on the subtask (its matches, its buffering, its
// drop), checkpoints apart.
func BenchmarkIntervalJoinCheckpoint(b *testing.B) {
	const (
		buffered = 100_000
		keys     = 20_000
		round    = buffered / 100
	)
	kg := func(k int64) int { return keygroup.Of(testCodec.Hash(k), 16) }
	pairs := 0
	emit := func(value, string, int64) { pairs++ }
	ts := int64(0)
	var adding time.Duration
	records := 0
	// feed adds n records, alternating sides, with the watermark buffered
	// ms behind.
	feed := func(j intervalJoin, n int) {
		start := time.Now()
		for range n {
			k := ts % keys
			if ts%2 == 0 {
				j.AddLeft(k, value{N: ts, Name: "a left record"}, ts, eventtime.MinTime, emit)
			} else {
				j.AddRight(k, "a right record", ts, eventtime.MinTime, emit)
			}
			ts++
			if ts%100 == 0 {
				j.Advance(ts - buffered)
			}
		}
		adding += time.Since(start)
		records += n
	}
	report := func(b *testing.B, bytes int64, stall time.Duration) {
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
		b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
		b.ReportMetric(float64(adding.Nanoseconds())/float64(records), "add-ns/record")
	}
	b.Run("memory", func(b *testing.B) {
		ts, adding, records = 0, 0, 0
		j := eventtime.NewIntervalJoin[int64, value, string](-buffered, buffered)
		feed(j, 2*buffered)
		adding, records = 0, 0
		var bytes int64
		var stall time.Duration
		for b.Loop() {
			feed(j, round)
			start := time.Now()
			sec := state.NewSections(0, 16)
			if err := j.Snapshot(sec, kg, testCodec.EncodeKey, testCodec.EncodeValue, encRight); err != nil {
				b.Fatal(err)
			}
			stall = max(stall, time.Since(start))
			for i := range sec.W {
				bytes += int64(len(sec.W[i].Bytes()))
			}
		}
		report(b, bytes, stall)
	})
	b.Run("pebble", func(b *testing.B) {
		ts, adding, records = 0, 0, 0
		fsys := vfs.NewMem()
		stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
		_, task := testTask(b, fsys, 0)
		j := OpenIntervalJoin(task, 0, -buffered, buffered, testCodec, encRight, decRight)
		st := j.store
		defer st.close()
		id := int64(0)
		checkpoint := func() (written int64, stall time.Duration) {
			id++
			if err := stor.Prepare(id); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for _, p := range st.parts {
				p.barrier()
			}
			c, base := st.begin(id, id-1)
			stall = time.Since(start)
			files, written, err := st.write(c, base, stor)
			if err != nil {
				b.Fatal(err)
			}
			m := &storage.Manifest{ID: id, Job: "p", MaxParallelism: 16,
				Nodes: []storage.NodeState{{UID: "agg", Name: "agg", Kind: "join", Parallelism: 1, Files: files}}}
			if err := stor.Commit(m); err != nil {
				b.Fatal(err)
			}
			return written, stall
		}
		feed(j, 2*buffered)
		checkpoint()
		adding, records = 0, 0
		var bytes int64
		var stall time.Duration
		for b.Loop() {
			feed(j, round)
			wr, s := checkpoint()
			bytes += wr
			stall = max(stall, s)
		}
		report(b, bytes, stall)
	})
}

// windowJoin is what the benchmark needs of either backend's window join.
type windowJoin interface {
	AddLeft(k int64, l value, ts, inputWatermark int64) bool
	AddRight(k int64, r string, ts, inputWatermark int64) bool
	Advance(wm int64, emit func(value, string, eventtime.Window))
}

// BenchmarkWindowJoinCheckpoint is BenchmarkIntervalJoinCheckpoint for a
// window join on tumbling windows of 100 s: about 100k records buffered
// (one per millisecond of event time, on 20k keys: each key's window
// holds about 5), of which 1% are new between two checkpoints, and the
// windows the watermark passes fire and are dropped.
func BenchmarkWindowJoinCheckpoint(b *testing.B) {
	const (
		buffered = 100_000
		keys     = 20_000
		round    = buffered / 100
	)
	a := eventtime.WindowAssigner{Kind: eventtime.Tumbling, Size: buffered}
	kg := func(k int64) int { return keygroup.Of(testCodec.Hash(k), 16) }
	pairs := 0
	emit := func(value, string, eventtime.Window) { pairs++ }
	ts := int64(0)
	var adding time.Duration
	records := 0
	feed := func(j windowJoin, n int) {
		start := time.Now()
		for range n {
			k := ts % keys
			if ts%2 == 0 {
				j.AddLeft(k, value{N: ts, Name: "a left record"}, ts, eventtime.MinTime)
			} else {
				j.AddRight(k, "a right record", ts, eventtime.MinTime)
			}
			ts++
			if ts%100 == 0 {
				j.Advance(ts-1, emit)
			}
		}
		adding += time.Since(start)
		records += n
	}
	report := func(b *testing.B, bytes int64, stall time.Duration) {
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
		b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
		b.ReportMetric(float64(adding.Nanoseconds())/float64(records), "add-ns/record")
	}
	b.Run("memory", func(b *testing.B) {
		ts, adding, records = 0, 0, 0
		j := eventtime.NewWindowJoin[int64, value, string](a, 0)
		feed(j, buffered+buffered/2)
		adding, records = 0, 0
		var bytes int64
		var stall time.Duration
		for b.Loop() {
			feed(j, round)
			start := time.Now()
			sec := state.NewSections(0, 16)
			if err := j.Snapshot(sec, kg, testCodec.EncodeKey, testCodec.EncodeValue, encRight); err != nil {
				b.Fatal(err)
			}
			stall = max(stall, time.Since(start))
			for i := range sec.W {
				bytes += int64(len(sec.W[i].Bytes()))
			}
		}
		report(b, bytes, stall)
	})
	b.Run("pebble", func(b *testing.B) {
		ts, adding, records = 0, 0, 0
		fsys := vfs.NewMem()
		stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
		_, task := testTask(b, fsys, 0)
		j := OpenWindowJoin(task, 0, a, 0, testCodec, encRight, decRight)
		st := j.win.(trigWindows[int64, joinWin[value, string]]).store
		defer st.close()
		id := int64(0)
		checkpoint := func() (written int64, stall time.Duration) {
			id++
			if err := stor.Prepare(id); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for _, p := range st.parts {
				p.barrier()
			}
			c, base := st.begin(id, id-1)
			stall = time.Since(start)
			files, written, err := st.write(c, base, stor)
			if err != nil {
				b.Fatal(err)
			}
			m := &storage.Manifest{ID: id, Job: "p", MaxParallelism: 16,
				Nodes: []storage.NodeState{{UID: "agg", Name: "agg", Kind: "join", Parallelism: 1, Files: files}}}
			if err := stor.Commit(m); err != nil {
				b.Fatal(err)
			}
			return written, stall
		}
		feed(j, buffered+buffered/2)
		checkpoint()
		adding, records = 0, 0
		var bytes int64
		var stall time.Duration
		for b.Loop() {
			feed(j, round)
			wr, s := checkpoint()
			bytes += wr
			stall = max(stall, s)
		}
		report(b, bytes, stall)
	})
}
