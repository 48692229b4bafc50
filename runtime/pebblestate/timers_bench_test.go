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

// BenchmarkTimersCheckpoint checkpoints a process operator's timers, 500K
// of them of 100K keys, after 1% of them changed (deleted and registered
// again later), on both backends: bytes written by the checkpoint and the
// stall at the barrier (the subtask's own work before it goes on). The
// memory backend encodes the timers registered and gone since the last
// checkpoint at the barrier (memory-full: every timer, as every
// checkpoint did before deltas); the pebble backend commits the changed ones and marks the cut, and its
// writer writes the store's new sstables.
//
//	go test ./runtime/pebblestate -run '^$' -bench TimersCheckpoint -benchtime 3x
func BenchmarkTimersCheckpoint(b *testing.B) {
	const timers, keys = 500_000, 100_000
	kg := func(k int64) int { return keygroup.Of(testCodec.Hash(k), 16) }
	change := func(reg, del func(k, at int64, processing bool), round int) {
		for i := range timers / 100 {
			k, at := int64(i*97%keys), int64(i/keys*1000+i%1000)
			del(k, at+int64(round)*1_000_000, false)
			reg(k, at+int64(round+1)*1_000_000, false)
		}
	}
	for _, full := range []bool{false, true} {
		name := "memory"
		if full {
			name = "memory-full" // every checkpoint in full, as before deltas
		}
		b.Run(name, func(b *testing.B) {
			m := eventtime.NewTimerService[int64]()
			for i := range timers {
				m.Register(int64(i%keys), int64(i/keys*1000+i%1000), false)
			}
			// The first checkpoint holds every timer.
			epoch, err := m.SnapshotDelta(state.NewSections(0, 16), kg, testCodec.EncodeKey, eventtime.Delta{Full: true, Keep: m.Epoch()})
			if err != nil {
				b.Fatal(err)
			}
			var bytes int64
			var stall time.Duration
			round := 0
			for b.Loop() {
				change(m.Register, m.Delete, round)
				round++
				start := time.Now()
				sec := state.NewSections(0, 16)
				d := eventtime.Delta{Full: full, Since: epoch, Keep: epoch}
				if epoch, err = m.SnapshotDelta(sec, kg, testCodec.EncodeKey, d); err != nil {
					b.Fatal(err)
				}
				stall = max(stall, time.Since(start))
				for i := range sec.W {
					bytes += int64(len(sec.W[i].Bytes()))
				}
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
			b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
		})
	}
	b.Run("pebble", func(b *testing.B) {
		fsys := vfs.NewMem()
		stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
		_, task := testTask(b, fsys, 0)
		st := Open(task, 0, testCodec)
		defer st.close()
		tm := OpenTimers(st)
		for i := range timers {
			tm.Register(int64(i%keys), int64(i/keys*1000+i%1000), false)
		}
		id := int64(0)
		checkpoint := func() (written int64, stall time.Duration) {
			id++
			if err := stor.Prepare(id); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			tm.barrier()
			c, base := st.begin(id, id-1)
			stall = time.Since(start)
			files, written, err := st.write(c, base, stor)
			if err != nil {
				b.Fatal(err)
			}
			m := &storage.Manifest{ID: id, Job: "p", MaxParallelism: 16,
				Nodes: []storage.NodeState{{UID: "agg", Name: "agg", Kind: "aggregate", Parallelism: 1, Files: files}}}
			if err := stor.Commit(m); err != nil {
				b.Fatal(err)
			}
			return written, stall
		}
		checkpoint() // the first holds every timer
		var bytes int64
		var stall time.Duration
		round := 0
		for b.Loop() {
			change(tm.Register, tm.Delete, round)
			round++
			w, s := checkpoint()
			bytes += w
			stall = max(stall, s)
		}
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
		b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
	})
}

// BenchmarkWindowsCheckpoint checkpoints the tumbling windows of a
// windowed aggregate, 200K keys in one open window, after 1% of the keys
// got a record, on both backends: bytes written by the checkpoint and the
// stall at the barrier. The memory backend encodes the windows that got
// records since the last checkpoint at the barrier (memory-full: every
// open window, as it did before deltas); the pebble backend marks the changed
// ones, and its writer writes them (the store's new sstables).
//
//	go test ./runtime/pebblestate -run '^$' -bench WindowsCheckpoint -benchtime 3x
func BenchmarkWindowsCheckpoint(b *testing.B) {
	const keys = 200_000
	a := eventtime.WindowAssigner{Kind: eventtime.Tumbling, Size: 1 << 40}
	add := func(v *value) { v.N++; v.Name = "a window's accumulator" }
	kg := func(k int64) int { return keygroup.Of(testCodec.Hash(k), 16) }
	for _, full := range []bool{false, true} {
		name := "memory"
		if full {
			name = "memory-full" // every checkpoint in full, as before deltas
		}
		b.Run(name, func(b *testing.B) {
			w := eventtime.NewWindowState[int64, value](a, 0, nil)
			for k := range int64(keys) {
				w.Add(k, 1, eventtime.MinTime, add, nil)
			}
			epoch, err := w.SnapshotDelta(state.NewSections(0, 16), kg, testCodec.EncodeKey, testCodec.EncodeValue, eventtime.Delta{Full: true, Keep: w.Epoch()})
			if err != nil {
				b.Fatal(err)
			}
			var bytes int64
			var stall time.Duration
			round := 0
			for b.Loop() {
				for i := range keys / 100 {
					w.Add(int64((round*keys/100+i)%keys), 1, eventtime.MinTime, add, nil)
				}
				round++
				start := time.Now()
				sec := state.NewSections(0, 16)
				d := eventtime.Delta{Full: full, Since: epoch, Keep: epoch}
				if epoch, err = w.SnapshotDelta(sec, kg, testCodec.EncodeKey, testCodec.EncodeValue, d); err != nil {
					b.Fatal(err)
				}
				stall = max(stall, time.Since(start))
				for i := range sec.W {
					bytes += int64(len(sec.W[i].Bytes()))
				}
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
			b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
		})
	}
	b.Run("pebble", func(b *testing.B) {
		fsys := vfs.NewMem()
		stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
		_, task := testTask(b, fsys, 0)
		w := OpenWindows(task, 0, a, 0, testCodec)
		st := w.store
		defer st.close()
		for k := range int64(keys) {
			w.Add(k, 1, eventtime.MinTime, add, nil)
		}
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
				Nodes: []storage.NodeState{{UID: "agg", Name: "agg", Kind: "aggregate", Parallelism: 1, Files: files}}}
			if err := stor.Commit(m); err != nil {
				b.Fatal(err)
			}
			return written, stall
		}
		checkpoint()
		var bytes int64
		var stall time.Duration
		round := 0
		for b.Loop() {
			for i := range keys / 100 {
				w.Add(int64((round*keys/100+i)%keys), 1, eventtime.MinTime, add, nil)
			}
			round++
			wr, s := checkpoint()
			bytes += wr
			stall = max(stall, s)
		}
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
		b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
	})
}
