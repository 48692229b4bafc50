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
// (one per millisecond of event time, on 20k keys, a key's two in a row,
// left and right: each key's window holds about 5), of which 1% are new
// between two checkpoints, and the windows the watermark passes fire and
// are dropped.
//
//	go test ./runtime/pebblestate -run '^$' -bench 'WindowJoinCheckpoint' -benchtime 200x
func BenchmarkWindowJoinCheckpoint(b *testing.B) {
	const (
		buffered = 100_000
		keys     = 20_000
	)
	a := eventtime.WindowAssigner{Kind: eventtime.Tumbling, Size: buffered}
	benchWindowJoin(b, a, 0, buffered+buffered/2, func(j windowJoin, ts int64, emit func(value, string, eventtime.Window)) {
		k := ts / 2 % keys
		if ts%2 == 0 {
			j.AddLeft(k, value{N: ts, Name: "a left record"}, ts, eventtime.MinTime)
		} else {
			j.AddRight(k, "a right record", ts, eventtime.MinTime)
		}
		if (ts+1)%100 == 0 {
			j.Advance(ts, emit)
		}
	})
}

// BenchmarkSessionJoinCheckpoint is BenchmarkWindowJoinCheckpoint for a
// window join on sessions with a gap of 400 ms and an allowed lateness of
// 100 s: one record per millisecond, each key's four records in a row
// (left, right, left, right) at 0, 700, 350 and 100 ms after the first,
// so that the first two open two sessions and the third merges them; the
// watermark follows the records, so the sessions fire about a second
// after their first record, with their 4 pairs, and stay for the
// lateness: about 100k records buffered, of which 1% are new between two
// checkpoints.
//
//	go test ./runtime/pebblestate -run '^$' -bench 'SessionJoinCheckpoint' -benchtime 200x
func BenchmarkSessionJoinCheckpoint(b *testing.B) {
	const (
		lateness = 100_000
		keys     = 20_000
	)
	a := eventtime.WindowAssigner{Kind: eventtime.Session, Gap: 400}
	offsets := [4]int64{0, 700, 350, 100}
	benchWindowJoin(b, a, lateness, lateness+lateness/2, func(j windowJoin, ts int64, emit func(value, string, eventtime.Window)) {
		k := ts / 4 % keys
		at := ts - ts%4 + offsets[ts%4]
		if ts%2 == 0 {
			j.AddLeft(k, value{N: ts, Name: "a left record"}, at, eventtime.MinTime)
		} else {
			j.AddRight(k, "a right record", at, eventtime.MinTime)
		}
		if (ts+1)%100 == 0 {
			j.Advance(ts, emit)
		}
	})
}

// benchWindowJoin runs a window join benchmark on both backends: add
// adds record ts (one per call, ts counting from 0) and moves the
// watermark when it likes; fill records are added before the first
// checkpoint, then 1% of 100k between two.
func benchWindowJoin(b *testing.B, a eventtime.WindowAssigner, lateness int64, fill int, add func(j windowJoin, ts int64, emit func(value, string, eventtime.Window))) {
	const round = 1000
	kg := func(k int64) int { return keygroup.Of(testCodec.Hash(k), 16) }
	pairs := 0
	emit := func(value, string, eventtime.Window) { pairs++ }
	ts := int64(0)
	var adding time.Duration
	records := 0
	feed := func(j windowJoin, n int) {
		start := time.Now()
		for range n {
			add(j, ts, emit)
			ts++
		}
		adding += time.Since(start)
		records += n
	}
	report := func(b *testing.B, bytes int64, stall time.Duration) {
		if pairs == 0 {
			b.Fatal("the join emitted no pair")
		}
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
		b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
		b.ReportMetric(float64(adding.Nanoseconds())/float64(records), "add-ns/record")
	}
	b.Run("memory", func(b *testing.B) {
		ts, adding, records = 0, 0, 0
		j := eventtime.NewWindowJoin[int64, value, string](a, lateness)
		feed(j, fill)
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
		j := OpenWindowJoin(task, 0, a, lateness, testCodec, encRight, decRight)
		side := j.side()
		defer side.close()
		id := int64(0)
		checkpoint := func() (written int64, stall time.Duration) {
			id++
			if err := stor.Prepare(id); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			write := side.begin(stor, id, false)
			stall = time.Since(start)
			files, written, err := write()
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
		feed(j, fill)
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
