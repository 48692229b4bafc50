package file

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// A file source's position in a checkpoint identifies what it read, so
// that a run resuming from it refuses input that changed since: the name,
// offset and line of the file it stands in, the CRC-32C of the bytes
// before the offset (kept as lines are read), and the file's size and
// modification time when the checkpoint was taken, which the error shows.
// Once a subtask has read all its files, it adds each one's name, size
// and modification time, so that a finished job rerun on other input
// refuses to pretend it has read it (input.CheckFinished).
//
// The fields after Line were added with manifest format 2; a position of
// format 1 has none and is restored without these checks.

// fileStat is a file's size and modification time: what changes when the
// file is written.
type fileStat struct {
	Size    int64
	ModTime int64 // Unix nanoseconds
}

func statOf(fi os.FileInfo) fileStat {
	return fileStat{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
}

// finishedFile is a file that a source subtask has read to its end.
type finishedFile struct {
	Name string
	fileStat
}

func (f fileStat) String() string {
	return fmt.Sprintf("%d bytes, modified %s", f.Size, time.Unix(0, f.ModTime).UTC().Format(time.RFC3339Nano))
}

// savedPosition is a source subtask's part of a checkpoint.
type savedPosition struct {
	Position
	// at is the file's size and modification time at the checkpoint.
	at fileStat
	// finished holds the subtask's files once it has read them all.
	finished []finishedFile
	// identified is false for a position of format 1.
	identified bool
	// rescaled, queue and mine are a rescaled subtask's (lineReader.rescaled).
	rescaled bool
	queue    []Position
	mine     []int
}

func (p *savedPosition) encode() []byte {
	w := codec.NewWriter(nil)
	w.Uvarint(uint64(p.File))
	w.String(p.Name)
	w.Varint(p.Offset)
	w.Varint(p.Line)
	w.Uvarint(uint64(p.CRC))
	w.Varint(p.at.Size)
	w.Varint(p.at.ModTime)
	w.Uvarint(uint64(len(p.finished)))
	for _, f := range p.finished {
		w.String(f.Name)
		w.Varint(f.Size)
		w.Varint(f.ModTime)
	}
	if p.rescaled {
		w.Uvarint(1)
		w.Uvarint(uint64(len(p.queue)))
		for _, q := range p.queue {
			w.Uvarint(uint64(q.File))
			w.String(q.Name)
			w.Varint(q.Offset)
			w.Varint(q.Line)
			w.Uvarint(uint64(q.CRC))
		}
		w.Uvarint(uint64(len(p.mine)))
		for _, i := range p.mine {
			w.Uvarint(uint64(i))
		}
	}
	return w.Bytes()
}

func decodePosition(data []byte) (savedPosition, error) {
	r := codec.NewReader(data)
	var p savedPosition
	p.File, p.Name, p.Offset, p.Line = int(r.Uvarint()), r.String(), r.Varint(), r.Varint()
	if r.More() {
		p.identified = true
		p.CRC = uint32(r.Uvarint())
		p.at = fileStat{Size: r.Varint(), ModTime: r.Varint()}
		if n := r.Count(); n > 0 {
			p.finished = make([]finishedFile, n)
			for i := range p.finished {
				p.finished[i] = finishedFile{Name: r.String(), fileStat: fileStat{Size: r.Varint(), ModTime: r.Varint()}}
			}
		}
		if r.More() && r.Uvarint() == 1 {
			p.rescaled = true
			if n := r.Count(); n > 0 {
				p.queue = make([]Position, n)
				for i := range p.queue {
					p.queue[i] = Position{File: int(r.Uvarint()), Name: r.String(), Offset: r.Varint(), Line: r.Varint(), CRC: uint32(r.Uvarint())}
				}
			}
			n := r.Count()
			for range n {
				p.mine = append(p.mine, int(r.Uvarint()))
			}
		}
	}
	return p, r.Err()
}

// Snapshot adds the source's read position to a checkpoint.
func (s *Source[T]) Snapshot(snap *checkpoint.Snapshot, node int) {
	snap.AddSource(node, s.lr.saved())
}

// saved is the source's part of a checkpoint.
func (s *lineReader) saved() storage.SourceState {
	p := savedPosition{Position: s.Position()}
	if s.f != nil {
		fi, err := s.f.Stat()
		if err != nil {
			s.fail(err)
		}
		p.at = statOf(fi)
	}
	if s.done {
		p.finished = s.finished
	}
	p.rescaled, p.queue, p.mine = s.rescaled, s.queue, s.mine
	return storage.SourceState{Subtask: s.sub, Position: p.encode(), AtEnd: s.done}
}

// restore moves the source to the position of the checkpoint the job
// resumes from, once it has checked that the file it stands in begins
// with what was read of it then.
func (s *lineReader) restore(node int) {
	ns := s.env.Checkpoints().RestoredNode(node)
	if ns == nil || len(ns.Sources) == 0 {
		return
	}
	if ns.Parallelism != s.step || len(ns.Sources) != s.step {
		s.rescale(ns)
		return
	}
	st := s.env.Checkpoints().RestoredSource(node, s.sub)
	if st == nil {
		return
	}
	p, err := decodePosition(st.Position)
	if err != nil {
		fault.Abortf("sources.%s[%d]: restore position: %w", s.name, s.sub, err)
	}
	s.resumeAt(p)
}

// resumeAt moves the source to p, a position of this subtask at this
// parallelism.
func (s *lineReader) resumeAt(p savedPosition) {
	s.rescaled, s.queue, s.mine = p.rescaled, p.queue, p.mine
	if p.identified && p.File >= 0 && p.File < len(s.files) && s.files[p.File] == p.Name {
		if err := checkRead(p); err != nil {
			fault.Abortf("sources.%s[%d]: %w; put the file back as it was, or run with --fresh to start the job over", s.name, s.sub, err)
		}
	}
	if err := s.Seek(p.Position); err != nil {
		fault.Abort(err)
	}
	if p.identified && p.File >= len(s.files) {
		s.finished = p.finished
	}
}

// checkRead returns an error, naming the file and what changed, unless
// the file of p still begins with the p.Offset bytes that were read of it
// before the checkpoint. What follows them may have been added since.
func checkRead(p savedPosition) error {
	f, err := os.Open(p.Name)
	if err != nil {
		return err
	}
	defer f.Close() // read only
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	now := statOf(fi)
	changed := func(what string) error {
		return fmt.Errorf("%s changed since the checkpoint: %s (then %v; now %v)", p.Name, what, p.at, now)
	}
	if now.Size < p.Offset {
		return changed(fmt.Sprintf("it has fewer bytes than the %d read before the checkpoint", p.Offset))
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, p.Offset)); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if h.Sum32() != p.CRC {
		return changed(fmt.Sprintf("its first %d bytes, read before the checkpoint, are not the same", p.Offset))
	}
	return nil
}

// statFiles returns the name, size and modification time of each of the
// subtask's files.
func (s *lineReader) statFiles() []finishedFile {
	out := []finishedFile{}
	idx := s.mine
	if !s.rescaled {
		idx = nil
		for i := s.sub; i < len(s.files); i += s.step {
			idx = append(idx, i)
		}
	}
	for _, i := range idx {
		fi, err := os.Stat(s.files[i])
		if err != nil {
			s.fail(err)
		}
		out = append(out, finishedFile{Name: s.files[i], fileStat: statOf(fi)})
	}
	return out
}

// input checks the files of file sources before a run.
type input struct{}

// CheckFinished returns an error unless the files that n's path matches
// now are those that its subtasks read in a final checkpoint, unchanged
// (same names, sizes and modification times): a finished job rerun on
// other or changed input must not report the old output as its result.
func (input) CheckFinished(n *config.NodeConfig, ns *storage.NodeState) error {
	path := n.Option("path")
	files, err := matchFiles(path)
	if err != nil {
		return err
	}
	var problems []error
	var read []finishedFile
	for _, st := range ns.Sources {
		p, err := decodePosition(st.Position)
		if err != nil {
			return fmt.Errorf("final position of subtask %d: %w", st.Subtask, err)
		}
		if !p.identified {
			return nil // format 1 recorded nothing to compare
		}
		read = append(read, p.finished...)
	}
	// The subtasks together read every file once (which subtask read
	// which depends on the parallelism, which may have changed).
	slices.SortFunc(read, func(a, b finishedFile) int { return strings.Compare(a.Name, b.Name) })
	if !slices.EqualFunc(files, read, func(name string, f finishedFile) bool { return name == f.Name }) {
		var then []string
		for _, f := range read {
			then = append(then, f.Name)
		}
		return fmt.Errorf("the job read %s, but path %q now gives %s", fileList(then), path, fileList(files))
	}
	for i, name := range files {
		fi, err := os.Stat(name)
		if err != nil {
			return err
		}
		if now := statOf(fi); now != read[i].fileStat {
			problems = append(problems, fmt.Errorf("%s changed since it was read (then %v; now %v)", name, read[i].fileStat, now))
		}
	}
	return errors.Join(problems...)
}

// fileList names files for a message, the first few of a long list.
func fileList(names []string) string {
	switch {
	case len(names) == 0:
		return "no file"
	case len(names) > 3:
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	return strings.Join(names, ", ")
}

// Recover, deferred by the chain of a file source, adds to a panic the file
// and line of the record being processed.
func (s *Source[T]) Recover() {
	if p := recover(); p != nil {
		s.lr.repanic(p)
	}
}

// repanic panics again with p, the value of a panic recovered while the
// record before the source's position was processed, naming its file
// and line.
func (s *lineReader) repanic(p any) {
	p2 := s.Position()
	origin := fmt.Sprintf("sources.%s", s.name)
	if p2.Name != "" {
		origin = fmt.Sprintf("%s:%d", p2.Name, p2.Line-1)
	}
	fault.PanicWithOrigin(p, origin)
}
