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

// BenchmarkSessionsCheckpoint measures what a checkpoint of session
// windows writes, and how long the subtask stops at the barrier, on each
// backend: 1M keys with an open session each, of which 1% get a record
// between two checkpoints (it extends the session: its value and its
// timer change). The memory backend writes every session at every
// checkpoint; the pebble backend marks the changed keys at the barrier,
// and its writer writes them (the store's new sstables). add-ns/record is
// the cost of a record on the subtask, checkpoints apart.
//
//	go test ./runtime/pebblestate -run '^$' -bench SessionsCheckpoint -benchtime 5x
func BenchmarkSessionsCheckpoint(b *testing.B) {
	const keys = 1_000_000
	a := eventtime.WindowAssigner{Kind: eventtime.Session, Gap: 1 << 40}
	add := func(v *value) { v.N++; v.Name = "a session's accumulator" }
	merge := func(dst, src *value) { dst.N += src.N }
	kg := func(k int64) int { return keygroup.Of(testCodec.Hash(k), 16) }
	var adding time.Duration
	records := 0
	// feed adds a record to 1% of the keys, at time ts.
	feed := func(w interface {
		Add(k int64, ts, wm int64, add func(*value), onUpdate func(int64, eventtime.Window, *value)) bool
	}, round int) {
		start := time.Now()
		for i := range keys / 100 {
			w.Add(int64((round*keys/100+i)%keys), int64(round+2), eventtime.MinTime, add, nil)
		}
		adding += time.Since(start)
		records += keys / 100
	}
	report := func(b *testing.B, bytes int64, stall time.Duration) {
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/ckpt")
		b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
		b.ReportMetric(float64(adding.Nanoseconds())/float64(records), "add-ns/record")
	}
	b.Run("memory", func(b *testing.B) {
		w := eventtime.NewWindowState[int64, value](a, 0, merge)
		for k := range int64(keys) {
			w.Add(k, 1, eventtime.MinTime, add, nil)
		}
		adding, records = 0, 0
		var bytes int64
		var stall time.Duration
		round := 0
		for b.Loop() {
			feed(w, round)
			round++
			start := time.Now()
			sec := state.NewSections(0, 16)
			if err := w.Snapshot(sec, kg, testCodec.EncodeKey, testCodec.EncodeValue); err != nil {
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
		fsys := vfs.NewMem()
		stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
		_, task := testTask(b, fsys, 0)
		w := OpenSessions(task, 0, a, 0, merge, testCodec)
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
		full, _ := checkpoint()
		b.ReportMetric(float64(full), "first-ckpt-bytes")
		adding, records = 0, 0
		var bytes int64
		var stall time.Duration
		round := 0
		for b.Loop() {
			feed(w, round)
			round++
			wr, s := checkpoint()
			bytes += wr
			stall = max(stall, s)
		}
		report(b, bytes, stall)
	})
}
