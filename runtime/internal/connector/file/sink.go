package file

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// writeBufferSize is the write buffer of a file sink.
const writeBufferSize = 256 << 10

// Sink is one subtask of a file sink: it writes its records, one per
// line, into part files of the sink's directory.
//
// With checkpoints it is exactly-once by two-phase commit. Records go to an
// in-progress file (.part-SUB-SEQ.inprogress). At a barrier the file is
// closed; the checkpoint's writer syncs it and renames it to
// .part-SUB-SEQ.pending (pre-commit), and once the checkpoint is complete
// the coordinator renames it to part-SUB-SEQ (commit). After a crash the
// restored checkpoint's pending files are committed and every other hidden
// file is removed. The committed output is exactly the directory's files
// whose names do not start with '.'.
//
// Without checkpoints (mode none) records go straight to part-SUB-SEQ.
//
// Only the encoding is generic (see Source): the files are partWriter's.
type Sink[T any] struct {
	pw  partWriter
	enc format.Encoder[T]
}

// partWriter is a file sink without its record type: it writes the lines
// of encoded records into part files and commits them.
type partWriter struct {
	cp   connector.Checkpoints
	name string
	sub  int
	path string // as set: relative to the working directory, or absolute
	dir  string // path made absolute
	// header, when not nil, is the first line of every part file (a CSV
	// header), without its line ending.
	header []byte
	fs     vfs.FS
	// transactional is false in mode none.
	transactional bool

	cur     vfs.File // the file being written, nil between files
	live    liveFile // cur, for the end of the job to close
	curSeq  uint64
	w       *bufio.Writer
	nextSeq uint64
	// pending are closed files not known to be committed, with the
	// checkpoint that covers each.
	pending []pendingPart
	// written counts the bytes of records since the last Flush, which
	// hands them to the metrics.
	written int
	m       *metrics.Node
}

// pendingPart is a closed file; its names are names in the sink's
// directory.
type pendingPart struct {
	storage.PendingFile
	inProgress string
	checkpoint int64 // 0 until a checkpoint covers it
}

// NewSink prepares subtask sub of the file sink node, encoding records
// with enc; enc may be nil when the caller encodes every record itself
// (Buf, Wrote) and never calls Write.
func NewSink[T any](env connector.Env, node, sub int, enc format.Encoder[T]) *Sink[T] {
	s := &Sink[T]{enc: enc}
	s.pw.start(env, node, sub)
	return s
}

// start prepares the writer of subtask sub of node.
func (s *partWriter) start(env connector.Env, node, sub int) {
	n := env.Node(node)
	cp := env.Checkpoints()
	*s = partWriter{cp: cp, name: n.Name, sub: sub, path: n.Option("path"), fs: cp.FS(), transactional: cp.Enabled(), m: env.Metrics().Node(node, sub)}
	dir, err := sinkDir(s.path)
	if err != nil {
		fault.Abortf("sinks.%s: bad path %q: %w", s.name, s.path, err)
	}
	s.dir = dir
	if err := vfs.MkdirAllDurable(s.fs, dir); err != nil {
		fault.Abortf("sinks.%s: %w", s.name, err)
	}
	if st, ok := cp.RestoredSink(node, sub); ok {
		s.nextSeq = st.NextSeq
	}
	s.w = bufio.NewWriterSize(nil, writeBufferSize)
	s.live.closeWhen(env.Context())
}

// SetHeader makes line (without a line ending) the first line of every
// part file the sink starts from now on: the header of a CSV file, so
// that each file can be read on its own.
func (s *Sink[T]) SetHeader(line []byte) { s.pw.header = line }

// Write writes one record.
func (s *Sink[T]) Write(v T) {
	// Encoding straight into the writer's free space spares a copy.
	b, err := s.enc(s.pw.Buf(), v)
	s.pw.Wrote(b, err)
}

// Buf is the free space of the sink's buffer, for generated code that
// encodes a record into it by reference, with its encoder called
// statically (Write takes the record by value and calls the encoder
// through a function value: a large record is copied on the way). Hand
// what the encoder returns to Wrote.
func (s *Sink[T]) Buf() []byte { return s.pw.Buf() }

func (s *partWriter) Buf() []byte {
	if s.cur == nil {
		s.open()
	}
	return s.w.AvailableBuffer()
}

// Wrote writes the record that was encoded at the start of the buffer
// Buf returned, with what the encoder returned.
func (s *Sink[T]) Wrote(b []byte, err error) { s.pw.Wrote(b, err) }

func (s *partWriter) Wrote(b []byte, err error) {
	if err != nil {
		fault.Abortf("sinks.%s: encode record: %w", s.name, err)
	}
	if _, err := s.w.Write(append(b, '\n')); err != nil {
		s.fail(err)
	}
	s.written += len(b) + 1
}

// partName is the committed name of file seq of sink subtask sub:
// part-00003-0000000012. Both numbers are zero-padded so that a listing
// sorted by name is in the order the files were written: the subtask to 5
// digits (max-parallelism is at most 32768), the sequence number to 10
// (a file per checkpoint, every second, for 300 years). A larger number
// still parses, it only sorts out of order.
func partName(sub int, seq uint64) string {
	return fmt.Sprintf("part-%05d-%010d", sub, seq)
}

func (s *partWriter) open() {
	s.curSeq = s.nextSeq
	s.nextSeq++
	name := partName(s.sub, s.curSeq)
	if s.transactional {
		name = "." + name + ".inprogress"
	}
	f, err := s.fs.Create(filepath.Join(s.dir, name))
	if err != nil {
		fault.Abortf("sinks.%s: %w", s.name, err)
	}
	s.cur = f
	s.live.track(f)
	s.w.Reset(f)
	if s.header != nil {
		if _, err := s.w.Write(s.header); err != nil {
			s.fail(err)
		}
		if err := s.w.WriteByte('\n'); err != nil {
			s.fail(err)
		}
		s.written += len(s.header) + 1
	}
}

// Flush hands the buffered records to the operating system.
func (s *Sink[T]) Flush() { s.pw.Flush() }

func (s *partWriter) Flush() {
	if s.cur == nil {
		return
	}
	if err := s.w.Flush(); err != nil {
		s.fail(err)
	}
	s.m.BytesOut.Add(uint64(s.written))
	s.written = 0
}

// closeCurrent closes the file being written; the next record opens a new
// one.
func (s *partWriter) closeCurrent() {
	if s.cur == nil {
		return
	}
	s.Flush()
	s.live.track(nil)
	if err := s.cur.Close(); err != nil {
		s.live.ended()
		fault.Abortf("sinks.%s: close %s: %w", s.name, s.cur.Name(), err)
	}
	s.cur = nil
	if !s.transactional {
		return
	}
	final := partName(s.sub, s.curSeq)
	s.pending = append(s.pending, pendingPart{
		PendingFile: storage.PendingFile{Seq: s.curSeq, Pending: "." + final + ".pending", Final: final},
		inProgress:  "." + final + ".inprogress",
	})
}

// PreCommit is the sink's part of a checkpoint: the file written since the
// last one is closed, and the snapshot carries every file not committed
// yet, to be made durable under its pending name by the checkpoint's
// writer and committed by the coordinator.
func (s *Sink[T]) PreCommit(snap *checkpoint.Snapshot, node int) { s.pw.PreCommit(snap, node) }

func (s *partWriter) PreCommit(snap *checkpoint.Snapshot, node int) {
	if !s.transactional {
		s.Flush()
		return
	}
	s.closeCurrent()
	committed := s.cp.Committed()
	kept := s.pending[:0]
	for _, p := range s.pending {
		if p.checkpoint == 0 || p.checkpoint > committed {
			kept = append(kept, p)
		}
	}
	s.pending = kept
	st := storage.SinkState{Subtask: s.sub, NextSeq: s.nextSeq, Path: s.path}
	var work []pendingPart
	for i := range s.pending {
		p := &s.pending[i]
		if !snap.Final && p.checkpoint == 0 {
			p.checkpoint = snap.ID
		}
		st.Pending = append(st.Pending, p.PendingFile)
		work = append(work, *p)
	}
	snap.AddSink(node, st)
	if len(work) > 0 {
		fsys, dir := s.fs, s.dir
		snap.Async(func() error { return preCommit(fsys, dir, work) })
	}
}

// preCommit makes closed files of directory dir durable under their
// pending names. It is
// idempotent: a file a failed checkpoint left in progress is synced and
// renamed by the next one. Two writers may run it on the same files at
// once (the final snapshot's and that of a checkpoint it superseded), so
// a file renamed under its feet is no error.
func preCommit(fsys vfs.FS, dir string, parts []pendingPart) error {
	// done reports whether p was pre-committed (or committed) already.
	done := func(p pendingPart) bool {
		if _, err := fsys.Stat(filepath.Join(dir, p.Pending)); err == nil {
			return true
		}
		_, err := fsys.Stat(filepath.Join(dir, p.Final))
		return err == nil
	}
	// The directory is synced even when every file was renamed before: by
	// a failed checkpoint whose sync of the directory may have failed, or
	// by the other writer, which may not have synced it yet.
	syncDir := false
	for _, p := range parts {
		inProgress := filepath.Join(dir, p.inProgress)
		f, err := fsys.Open(inProgress)
		if errors.Is(err, fs.ErrNotExist) && done(p) {
			syncDir = true
			continue
		}
		if err != nil {
			return fmt.Errorf("pre-commit %s: %w", inProgress, err)
		}
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(serr, cerr); err != nil {
			return fmt.Errorf("pre-commit %s: %w", inProgress, err)
		}
		if err := fsys.Rename(inProgress, filepath.Join(dir, p.Pending)); err != nil && !(errors.Is(err, fs.ErrNotExist) && done(p)) {
			return fmt.Errorf("pre-commit %s: %w", inProgress, err)
		}
		syncDir = true
	}
	if syncDir {
		return vfs.SyncDir(fsys, dir)
	}
	return nil
}

// End closes the sink. With checkpoints its last file was pre-committed by
// the final snapshot; without, the file is synced in place.
func (s *Sink[T]) End() { s.pw.End() }

func (s *partWriter) End() {
	if s.cur == nil {
		return
	}
	f := s.cur
	s.Flush()
	if err := f.Sync(); err != nil {
		s.fail(err)
	}
	s.closeCurrent()
}

func (s *partWriter) fail(err error) {
	if s.cur != nil {
		s.live.track(nil)
		s.cur.Close()
	}
	s.live.ended()
	fault.Abortf("sinks.%s: %w", s.name, err)
}
