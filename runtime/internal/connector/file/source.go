// Package file is the file connector: a source that reads a file, a
// folder or a glob of files, split over its subtasks, in the line formats
// of package format; and a transactional sink that writes part files,
// committed by renaming when a checkpoint completes (two-phase commit).
package file

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
)

// readBufferSize is the read buffer of a file source: large enough that a
// read system call costs little per line.
const readBufferSize = 256 << 10

// castagnoli is the CRC-32C table, which most processors compute in
// hardware.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// utf8BOM is dropped from the start of every file: editors and spreadsheets
// write it, and it would otherwise end up in the first record (or break the
// first JSON value, or the first csv column name).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Position is where a file source stands: the next record is read from
// byte Offset of the file, which is line Line (from 1).
type Position struct {
	// File is the index of the file in the source's sorted list of
	// matched files (for every subtask), the length of that list once the
	// subtask has read all its files.
	File int
	// Name is the file's path, to check that the list of files is still
	// the same when a position is restored.
	Name   string
	Offset int64
	Line   int64
	// CRC is the CRC-32C of the file's bytes before Offset, the part the
	// source has read: a restore compares it with the file's, so that a
	// file changed since the checkpoint is refused (checkRead).
	CRC uint32
}

// Source is one subtask of a file source: it reads its share of the
// matched files, one after the other, and decodes their lines with a
// Format.
//
// Only the decoding is generic: Go compiles a generic type's methods
// again in every program, for each record type it is instantiated with,
// so the rest, the lines read and where they stand (listing, opening,
// seeking, checkpointing and rescaling the files), is lineReader's,
// compiled once with this package.
type Source[T any] struct {
	lr     lineReader
	format format.Format[T]
	dec    format.Decoder[T] // lr.dec, typed
}

// lineReader is a file source without its record type: it hands Source
// the lines to decode.
type lineReader struct {
	name string
	sub  int
	env  connector.Env
	ctl  *checkpoint.SourceCtl
	skip bool // on-error=skip
	// deadLetter is set for on-error=dead-letter; dead is what takes the
	// malformed records then (OnDeadLetter).
	deadLetter bool
	dead       func(string)
	cancel     <-chan struct{}
	live       liveFile // f, for the end of the job to close

	// files are all matched files, sorted; this subtask reads files
	// cur, cur+step, ...
	files []string
	cur   int
	step  int
	// rescaled is set for a subtask that resumed at another parallelism
	// (rescale.go): after the file cur it reads the files of queue, each
	// from its position, and then none; mine are the indexes of every
	// file it has read or will read (for statFiles).
	rescaled bool
	queue    []Position
	mine     []int

	f *os.File // nil when the file cur is not open yet
	r *bufio.Reader
	// dec is the decoder of the file cur, made by newDecoder (Source's,
	// which keeps it typed) when the file is opened.
	dec        headerDecoder
	newDecoder func() headerDecoder
	// spans is dec when its records may go on past a line break (csv);
	// record assembles such a record's lines.
	spans  format.Spanning
	record []byte
	// header mirrors dec.NeedsHeader, to spare a call per line.
	header bool
	// long assembles a line longer than the read buffer.
	long []byte
	off  int64 // offset of the next line in the file
	line int64 // number of the next line
	// crc is the CRC-32C of the file's bytes before off, but for the
	// lines taken from window: readLine takes lines from a view of the
	// read buffer (window, which starts as all of view) without calling
	// the reader, and release hands them back to it and adds them to
	// the checksum at once. Summing a run, not line by line, keeps the
	// checksum cheap.
	crc          uint32
	view, window []byte
	// finished identifies the files of this subtask once it has read
	// them all, for the final checkpoint (input.CheckFinished).
	finished []finishedFile

	uncounted int
	skipped   int64
	firstSkip string
	done      bool

	// m and chain are the subtask's counters; read counts the bytes read
	// since the last count, sizes the sizes of this subtask's files (by
	// index, once known), for the lag.
	m     *metrics.Node
	chain *metrics.Chain
	read  int64
	sizes []int64

	// align keeps the subtask within timestamps.max-drift of the others
	// (Align); nil without.
	align *connector.Aligner
}

// headerDecoder is the part of a format.Decoder that does not name the
// record type.
type headerDecoder interface {
	NeedsHeader() bool
	Header(line []byte) error
}

// Align makes the subtask stop reading while its watermarks (wm's) are
// more than the node's timestamps.max-drift ahead of the slowest of the
// other subtasks' (connector.Align): generated code calls it for a source
// with a maximum drift.
func (s *Source[T]) Align(node int, wm connector.Emitter) { s.lr.setAlign(node, wm) }

func (s *lineReader) setAlign(node int, wm connector.Emitter) {
	s.align = connector.Align(s.env, node, s.sub, wm)
	if s.align != nil && s.done {
		s.align.Release()
	}
}

// NewSource prepares subtask sub of the file source node, decoding
// records with format. It only lists the files: they are opened when read.
func NewSource[T any](env connector.Env, node, sub int, f format.Format[T]) *Source[T] {
	s := &Source[T]{format: f}
	newDecoder := func() headerDecoder {
		s.dec = s.format.NewDecoder()
		return s.dec
	}
	strict := func() bool {
		st, ok := s.format.(format.Strictable[T])
		if ok {
			s.format = st.Strict()
		}
		return ok
	}
	s.lr.start(env, node, sub, newDecoder, strict)
	return s
}

// start prepares the reader of subtask sub of node. newDecoder makes the
// decoder of a file; strict makes the format strict, and reports false
// if it cannot be.
func (s *lineReader) start(env connector.Env, node, sub int, newDecoder func() headerDecoder, strict func() bool) {
	n := env.Node(node)
	*s = lineReader{
		name:       n.Name,
		sub:        sub,
		env:        env,
		newDecoder: newDecoder,
		cancel:     env.Context().Done(),
		cur:        sub,
		step:       env.Parallelism(node),
		line:       1,
	}
	switch onErr := n.Option("on-error"); onErr {
	case "", "fail":
	case "skip":
		s.skip = true
	case "dead-letter":
		s.deadLetter = true
	default:
		fault.Abortf("sources.%s: on-error wants fail, skip or dead-letter, got %q", s.name, onErr)
	}
	if n.Option("strict") == "true" && !strict() {
		fault.Abortf("sources.%s: strict applies to formats jsonl and csv only", s.name)
	}
	path := n.Option("path")
	files, err := matchFiles(path)
	if err != nil {
		fault.Abortf("sources.%s: %w", s.name, err)
	}
	s.files = files
	s.ctl = env.Checkpoints().NewSourceCtl()
	s.m, s.chain = env.Metrics().Node(node, sub), env.Metrics().Chain(node, sub)
	s.live.closeWhen(env.Context())
	s.restore(node)
}

// matchFiles lists the files that path names, sorted: the file itself, the
// regular files of a directory (not in its subdirectories, and without the
// hidden files that start with . or _), or the files matching a glob
// pattern. A path that matches no file is an error.
func matchFiles(path string) ([]string, error) {
	files, err := listFiles(path)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("path %q matches no file", path)
		if !filepath.IsAbs(path) {
			// Data paths are relative to the working directory, which
			// may not be the pipeline file's folder.
			if wd, werr := os.Getwd(); werr == nil {
				err = fmt.Errorf("path %q (resolved against the working directory %s) matches no file", path, wd)
			}
		}
	}
	return files, err
}

func listFiles(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("path is empty")
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.IsDir():
		return []string{path}, nil
	case err == nil:
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		var files []string
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
				continue
			}
			p := filepath.Join(path, e.Name())
			if isRegular(p, e.Type()) {
				files = append(files, p)
			}
		}
		slices.Sort(files)
		return files, nil
	case errors.Is(err, fs.ErrNotExist):
		matches, err := filepath.Glob(path)
		if err != nil {
			return nil, fmt.Errorf("path %q: %w", path, err)
		}
		var files []string
		for _, p := range matches {
			if isRegular(p, 0) {
				files = append(files, p)
			}
		}
		slices.Sort(files)
		return files, nil
	}
	return nil, err
}

func isRegular(path string, mode fs.FileMode) bool {
	if mode.IsRegular() {
		return true
	}
	// A symbolic link (or an entry whose type is not known yet) counts by
	// what it points to.
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// Ctl is the source's control block, polled for barriers between records.
func (s *Source[T]) Ctl() *checkpoint.SourceCtl { return s.lr.ctl }

// Done reports that the source has read all its files, or that the job
// drains (checkpoint.SourceCtl.AtEnd); it is meaningful after Next
// returned false.
func (s *Source[T]) Done() bool { return s.lr.done || s.lr.ctl.Draining() }

// Next returns the next record. It returns false once every file is read
// (Done), and for a while when the subtask is ahead of the others by more
// than its maximum drift (Align): reading a file never has to wait for
// more.
func (s *Source[T]) Next() (T, bool) {
	for {
		line, lineNo, ok := s.lr.next()
		if !ok {
			var zero T
			return zero, false
		}
		rec, ok, err := s.dec.Decode(line)
		if err != nil {
			s.lr.malformed(lineNo, line, err)
			continue
		}
		if !ok {
			continue
		}
		if s.lr.uncounted++; s.lr.uncounted == connector.CountEvery {
			s.lr.count()
		}
		return rec, true
	}
}

// next returns the next line to decode, without its line ending, and its
// number; false when Next has no record to return (see Next). The line
// is valid until the next call.
func (s *lineReader) next() ([]byte, int64, bool) {
	if s.ctl.Draining() {
		s.count()
		if s.align != nil {
			s.align.Release()
		}
		return nil, 0, false
	}
	if s.align != nil && s.align.Hold() {
		connector.WaitAligned(s.chain)
		return nil, 0, false
	}
	for {
		if s.f == nil && !s.open() {
			return nil, 0, false
		}
		raw, err := s.readLine()
		if err != nil {
			if err != io.EOF {
				s.fail(err)
			}
			s.closeFile()
			s.advance()
			continue
		}
		lineNo := s.line
		s.line++
		s.off += int64(len(raw))
		s.read += int64(len(raw))
		line := raw
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if lineNo == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if s.spans != nil && s.spans.Continues(line, false) {
			line = s.spanned(line)
		}
		if s.header {
			if len(line) == 0 {
				continue
			}
			if err := s.dec.Header(line); err != nil {
				fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s: %s:%d: %w", s.name, s.files[s.cur], lineNo, err)})
			}
			s.header = false
			continue
		}
		return line, lineNo, true
	}
}

// spanned reads the lines that follow first, the first line of a record
// that goes on past its line break (a quoted csv field holds one), up to
// the line that ends it or the end of the file, and returns the whole
// record, its line breaks as "\n" (as encoding/csv reads them). The
// record is valid until the next call.
func (s *lineReader) spanned(first []byte) []byte {
	s.record = append(s.record[:0], first...)
	for {
		raw, err := s.readLine()
		if err == io.EOF {
			// A quoted field not closed before the end of the file:
			// decoding reports the record malformed.
			return s.record
		}
		if err != nil {
			s.fail(err)
		}
		s.line++
		s.off += int64(len(raw))
		s.read += int64(len(raw))
		line := bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
		s.record = append(append(s.record, '\n'), line...)
		if !s.spans.Continues(line, true) {
			return s.record
		}
	}
}

// readLine returns the next line with its line ending, or io.EOF at the end
// of the file, and adds it to the checksum of what was read. The line is
// valid until the next read.
func (s *lineReader) readLine() ([]byte, error) {
	if i := bytes.IndexByte(s.window, '\n'); i >= 0 {
		line := s.window[:i+1]
		s.window = s.window[i+1:]
		return line, nil
	}
	// Reading more moves the buffer's content: first release the lines
	// taken; then take from all that is in the buffer, if it holds a
	// whole line.
	s.release()
	if n := s.r.Buffered(); n > 0 {
		s.view, _ = s.r.Peek(n)
		if i := bytes.IndexByte(s.view, '\n'); i >= 0 {
			s.window = s.view[i+1:]
			return s.view[:i+1], nil
		}
		s.view = nil
	}
	line, err := s.r.ReadSlice('\n')
	if err == nil {
		s.crc = crc32.Update(s.crc, castagnoli, line)
		return line, nil
	}
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	switch {
	case err == io.EOF && len(line) > 0:
		// The last line of a file without a final line break; the next
		// read reports the end.
		s.crc = crc32.Update(s.crc, castagnoli, line)
		return line, nil
	case err == io.EOF:
		return nil, io.EOF
	case err != nil:
		return nil, err
	}
	s.crc = crc32.Update(s.crc, castagnoli, line)
	return line, nil
}

// open opens the file the source stands at; false when there is none left.
func (s *lineReader) open() bool {
	if s.cur >= len(s.files) {
		s.finish()
		return false
	}
	if err := s.openFile(); err != nil {
		s.fail(err)
	}
	return true
}

func (s *lineReader) openFile() error {
	f, err := os.Open(s.files[s.cur])
	if err != nil {
		return err
	}
	s.f = f
	s.live.track(f)
	if s.r == nil {
		s.r = bufio.NewReaderSize(f, readBufferSize)
	} else {
		s.r.Reset(f)
	}
	s.dec = s.newDecoder()
	s.spans, _ = s.dec.(format.Spanning)
	s.header = s.dec.NeedsHeader()
	s.off, s.line, s.crc, s.view, s.window = 0, 1, 0, nil, nil
	return nil
}

// release consumes, in the reader, the lines taken from the window, and
// adds them to the checksum.
func (s *lineReader) release() {
	if s.view == nil {
		return
	}
	taken := len(s.view) - len(s.window)
	s.crc = crc32.Update(s.crc, castagnoli, s.view[:taken])
	s.r.Discard(taken)
	s.view, s.window = nil, nil
}

func (s *lineReader) closeFile() {
	if s.f != nil {
		s.live.track(nil)
		s.f.Close() // read only: nothing to lose
		s.f = nil
	}
	s.off, s.line, s.crc, s.view, s.window = 0, 1, 0, nil, nil
	if cap(s.long) > 4*readBufferSize {
		s.long = nil // one huge line should not pin its memory for good
	}
}

func (s *lineReader) fail(err error) {
	s.closeFile()
	s.live.ended()
	fault.Abortf("sources.%s: %w", s.name, err)
}

func (s *lineReader) malformed(lineNo int64, line []byte, err error) {
	switch {
	case s.deadLetter && s.dead != nil:
		s.dead(deadLetterOf(s.name, s.files[s.cur], lineNo, line, err))
	case s.deadLetter:
		s.closeFile()
		fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s: on-error dead-letter was set when the program was compiled without a reader of %s.dead-letter: add a sink with input: %s.dead-letter to the pipeline and rebuild", s.name, s.name, s.name)})
	case !s.skip:
		s.closeFile()
		// Not worth a restart: the record is read again and fails again.
		fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s: %s:%d: %w (a malformed record fails the job, and a restart would read it again: set sources.%s.on-error to skip or dead-letter to go on without it)", s.name, s.files[s.cur], lineNo, err, s.name)})
	}
	if s.skipped == 0 {
		s.firstSkip = fmt.Sprintf("%s:%d: %v", s.files[s.cur], lineNo, err)
	}
	s.skipped++
	s.ctl.Malformed()
	s.m.Malformed.Add(1)
}

// OnDeadLetter sets what takes the malformed records of on-error
// dead-letter: each as a JSON object with the source, file, line, error
// and the record's text. Generated code passes the emit function of the
// side output NAME.dead-letter.
func (s *Source[T]) OnDeadLetter(fn func(string)) { s.lr.dead = fn }

// deadLetterOf writes a malformed record as one JSON object.
func deadLetterOf(source, file string, line int64, record []byte, err error) string {
	b, _ := json.Marshal(struct {
		Source string `json:"source"`
		File   string `json:"file"`
		Line   int64  `json:"line"`
		Error  string `json:"error"`
		Record string `json:"record"`
	}{source, file, line, err.Error(), string(record)})
	return string(b)
}

func (s *lineReader) count() {
	s.ctl.Count(s.uncounted)
	s.uncounted = 0
	s.publish()
	// A source that never waits on a full channel would otherwise go on
	// reading after the job has failed.
	select {
	case <-s.cancel:
		s.closeFile()
		fault.Abort(fault.ErrCanceled)
	default:
	}
}

func (s *lineReader) finish() {
	if s.done {
		return
	}
	s.done = true
	if s.align != nil {
		s.align.Release()
	}
	if s.finished == nil {
		// A subtask restored at its end keeps what it recorded then.
		s.finished = s.statFiles()
	}
	s.ctl.Count(s.uncounted)
	s.uncounted = 0
	s.publish()
	s.chain.InputEnded()
	switch {
	case s.skipped > 0 && s.deadLetter:
		s.env.Logger().Info(fmt.Sprintf("sources.%s[%d]: sent %d malformed records to %s.dead-letter (first: %s)", s.name, s.sub, s.skipped, s.name, s.firstSkip), "node", s.name, "subtask", s.sub)
	case s.skipped > 0:
		s.env.Logger().Warn(fmt.Sprintf("sources.%s[%d]: skipped %d malformed records (first: %s)", s.name, s.sub, s.skipped, s.firstSkip), "node", s.name, "subtask", s.sub)
	}
}

// publish hands the bytes read to the metrics, with what is left to read
// (the lag): the rest of the file being read and the files after it.
func (s *lineReader) publish() {
	s.m.BytesIn.Add(uint64(s.read))
	s.read = 0
	if s.sizes == nil {
		s.sizes = make([]int64, len(s.files))
		for _, i := range append([]int{s.cur}, s.rest()...) {
			if i >= len(s.files) {
				continue
			}
			if fi, err := os.Stat(s.files[i]); err == nil {
				s.sizes[i] = fi.Size()
			}
		}
	}
	var left int64
	if s.cur < len(s.files) {
		left = max(s.sizes[s.cur]-s.off, 0)
		for _, i := range s.rest() {
			left += s.sizes[i]
		}
	}
	s.m.Lag.Store(left)
}

// Position returns where the next record will be read from.
func (s *Source[T]) Position() Position { return s.lr.Position() }

func (s *lineReader) Position() Position {
	if s.cur >= len(s.files) {
		return Position{File: len(s.files), Line: 1}
	}
	s.release()
	return Position{File: s.cur, Name: s.files[s.cur], Offset: s.off, Line: s.line, CRC: s.crc}
}

// Seek makes the next record the one at p, a position taken from a source
// reading the same files with the same parallelism. The files of this
// subtask before p's are not read. It takes p.CRC as the checksum of what
// was read before p: checkRead verifies it.
func (s *Source[T]) Seek(p Position) error { return s.lr.Seek(p) }

func (s *lineReader) Seek(p Position) error {
	s.closeFile()
	s.done = false
	if p.File >= len(s.files) {
		s.cur = len(s.files)
		return nil
	}
	switch {
	case p.File < 0 || !s.rescaled && p.File%s.step != s.sub%s.step:
		return fmt.Errorf("sources.%s[%d]: position in file %d belongs to another subtask", s.name, s.sub, p.File)
	case s.files[p.File] != p.Name:
		return fmt.Errorf("sources.%s[%d]: position in %s, but file %d is now %s: the files changed", s.name, s.sub, p.Name, p.File, s.files[p.File])
	case p.Offset < 0 || p.Line < 1:
		return fmt.Errorf("sources.%s[%d]: bad position %s:%d at offset %d", s.name, s.sub, p.Name, p.Line, p.Offset)
	}
	s.cur = p.File
	err := s.seek(p)
	if err != nil {
		s.closeFile()
		return fmt.Errorf("sources.%s[%d]: %w", s.name, s.sub, err)
	}
	return nil
}

func (s *lineReader) seek(p Position) error {
	if err := s.openFile(); err != nil {
		return err
	}
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < p.Offset {
		return fmt.Errorf("%s has %d bytes, fewer than the position's offset %d: the file changed", p.Name, fi.Size(), p.Offset)
	}
	// The records past the header need the binding that the header makes.
	for s.header && s.off < p.Offset {
		raw, err := s.readLine()
		if err != nil {
			return fmt.Errorf("read header of %s: %w", p.Name, err)
		}
		s.off += int64(len(raw))
		line := bytes.TrimPrefix(bytes.TrimRight(raw, "\r\n"), utf8BOM)
		if len(line) == 0 {
			continue
		}
		if err := s.dec.Header(line); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		s.header = false
	}
	if _, err := s.f.Seek(p.Offset, io.SeekStart); err != nil {
		return err
	}
	s.r.Reset(s.f)
	s.off, s.line, s.crc, s.view, s.window = p.Offset, p.Line, p.CRC, nil, nil
	return nil
}
