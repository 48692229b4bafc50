package storage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// stateMagic starts every state file.
var stateMagic = []byte("PGS1")

// A state file is the magic, the first key group and the number of
// sections (uvarints), each section length-prefixed, then the CRC-32C
// (Castagnoli, 4 bytes little-endian) of everything before it. It is
// written and read one section at a time: neither side holds the whole
// file in memory, and the checksum is computed as the bytes pass.

// StateWriter writes a state file section by section.
type StateWriter struct {
	fsys vfs.FS
	path string
	f    vfs.File
	// buf gathers small writes; a large section is written directly.
	buf  []byte
	crc  uint32
	size int64
	// left is the number of sections still to come.
	left int
	err  error
}

// stateWriteBuffer is how much a StateWriter gathers before it writes.
const stateWriteBuffer = 256 << 10

// CreateState creates the state file path, which holds the sections of
// key groups [start, start+sections).
func CreateState(fsys vfs.FS, path string, start, sections int) (*StateWriter, error) {
	f, err := fsys.Create(path)
	if err != nil {
		return nil, err
	}
	w := &StateWriter{fsys: fsys, path: path, f: f, left: sections, buf: make([]byte, 0, 4<<10)}
	w.buf = append(w.buf, stateMagic...)
	w.buf = binary.AppendUvarint(w.buf, uint64(start))
	w.buf = binary.AppendUvarint(w.buf, uint64(sections))
	return w, nil
}

// Section writes the next section, made of parts one after the other.
func (w *StateWriter) Section(parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if w.left == 0 && w.err == nil {
		w.err = fmt.Errorf("%s: more sections than the header announced", w.path)
	}
	w.left--
	w.buf = binary.AppendUvarint(w.buf, uint64(n))
	for _, p := range parts {
		w.write(p)
	}
}

// write adds p to the file.
func (w *StateWriter) write(p []byte) {
	if len(p) >= stateWriteBuffer/4 {
		w.flush()
		w.out(p)
		return
	}
	if len(w.buf)+len(p) > stateWriteBuffer {
		w.flush()
	}
	w.buf = append(w.buf, p...)
}

// flush writes what buf gathered.
func (w *StateWriter) flush() {
	w.out(w.buf)
	w.buf = w.buf[:0]
}

func (w *StateWriter) out(p []byte) {
	if w.err != nil || len(p) == 0 {
		return
	}
	w.crc = crc32.Update(w.crc, castagnoli, p)
	w.size += int64(len(p))
	if _, err := w.f.Write(p); err != nil {
		w.err = err
	}
}

// Close writes the checksum, syncs and closes the file, and returns its
// size and checksum. On failure the file is removed.
func (w *StateWriter) Close() (size int64, crc uint32, err error) {
	if w.left != 0 && w.err == nil {
		w.err = fmt.Errorf("%s: %d sections missing", w.path, w.left)
	}
	if w.err == nil {
		// The checksum goes out with the last bytes: a small file is
		// one write.
		w.crc = crc32.Update(w.crc, castagnoli, w.buf)
		w.buf = binary.LittleEndian.AppendUint32(w.buf, w.crc)
		if _, err := w.f.Write(w.buf); err != nil {
			w.err = err
		}
		w.size += int64(len(w.buf))
		w.buf = nil
	}
	if w.err == nil {
		w.err = w.f.Sync()
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	if w.err != nil {
		w.fsys.Remove(w.path)
		return 0, 0, w.err
	}
	return w.size, w.crc, nil
}

// Abort closes and removes a file that will not be finished.
func (w *StateWriter) Abort() {
	w.f.Close()
	w.fsys.Remove(w.path)
}

// StateReader reads a state file one section at a time and checks the
// file's checksum once the last section is read.
type StateReader struct {
	path  string
	f     vfs.File
	r     *bufio.Reader
	crc   uint32
	start int
	n     int
	next  int
	// size is the file's size from the manifest; read counts the bytes
	// read so far.
	size, read int64
	sec        []byte
	err        error
	// data is the whole file mapped into memory (OpenStateMapped), nil
	// when it is read; its bytes before released are unmapped.
	data     []byte
	released int64
}

// OpenState opens the state file path, whose manifest says it has size
// bytes and checksum crc.
func OpenState(fsys vfs.FS, path string, size int64, crc uint32) (*StateReader, error) {
	return openState(fsys, path, size, crc, false)
}

// OpenStateMapped is OpenState of a reader whose sections are the file's
// bytes mapped into memory where the system can (a file of the operating
// system's), not copies: a restore then reads what the page cache holds
// without a copy into a buffer of its own (7% of the CPU of a memory
// restore). Its sections are valid until the next call of Next, as
// OpenState's are, and read-only; after Close, using one faults.
func OpenStateMapped(fsys vfs.FS, path string, size int64, crc uint32) (*StateReader, error) {
	return openState(fsys, path, size, crc, true)
}

func openState(fsys vfs.FS, path string, size int64, crc uint32, mapped bool) (*StateReader, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	r := &StateReader{path: path, f: f, size: size}
	if size < int64(len(stateMagic))+4 {
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, too short for a state file", path, size)
	}
	if mapped {
		r.data = mapFile(f, size)
	}
	if r.data == nil {
		r.r = bufio.NewReaderSize(f, 256<<10)
	}
	magic := r.bytes(len(stateMagic))
	start, n := r.uvarint(), r.uvarint()
	if r.err == nil && !bytes.Equal(magic, stateMagic) {
		r.err = errors.New("not a state file")
	}
	if r.err == nil && (start > 1<<20 || n > uint64(size)) {
		r.err = fmt.Errorf("bad header: first key group %d, %d sections", start, n)
	}
	if r.err != nil {
		err := fmt.Errorf("%s: %w", path, r.err)
		r.Close()
		return nil, err
	}
	r.start, r.n = int(start), int(n)
	_ = crc // checked against the trailer, which the manifest's CRC equals (Load verified it)
	return r, nil
}

// Start is the first key group of the file.
func (r *StateReader) Start() int { return r.start }

// Len is the number of sections.
func (r *StateReader) Len() int { return r.n }

// Next returns the key group and the bytes of the next section, valid
// until the next call; ok is false after the last section or on an error.
func (r *StateReader) Next() (kg int, section []byte, ok bool) {
	if r.err != nil || r.next >= r.n {
		return 0, nil, false
	}
	n := r.uvarint()
	if r.err == nil && n > uint64(r.size-r.read) {
		r.err = fmt.Errorf("section of %d bytes, only %d remain", n, r.size-r.read)
	}
	if r.err != nil {
		return 0, nil, false
	}
	if r.data != nil {
		// The sections before this one are read: their pages leave the
		// process (the page cache keeps them), or else a restore would
		// count its files in its resident memory as it goes.
		if r.read-r.released >= 1<<20 {
			r.released = releaseMapped(r.data, r.released, r.read)
		}
		// No more than the section: appending to it copies.
		sec := r.data[r.read : r.read+int64(n) : r.read+int64(n)]
		r.crc = crc32.Update(r.crc, castagnoli, sec)
		r.read += int64(n)
		kg = r.start + r.next
		r.next++
		return kg, sec, true
	}
	if uint64(cap(r.sec)) < n {
		r.sec = make([]byte, n)
	}
	r.sec = r.sec[:n]
	r.fill(r.sec)
	if r.err != nil {
		return 0, nil, false
	}
	kg = r.start + r.next
	r.next++
	return kg, r.sec, true
}

// Close checks, when every section was read, that nothing follows them
// but the checksum and that the checksum matches; it closes the file and
// returns the first error met.
func (r *StateReader) Close() error {
	if r.err == nil && r.next == r.n {
		if extra := r.size - 4 - r.read; extra != 0 {
			r.err = fmt.Errorf("%d bytes after the last of %d sections", extra, r.n)
		} else {
			var tail [4]byte
			if r.data != nil {
				copy(tail[:], r.data[r.read:])
			} else if _, err := io.ReadFull(r.r, tail[:]); err != nil {
				r.err = err
			}
			if r.err == nil && binary.LittleEndian.Uint32(tail[:]) != r.crc {
				r.err = errors.New("checksum mismatch: the file is damaged")
			}
		}
	}
	r.f.Close()
	r.sec = nil
	if r.data != nil {
		unmapFile(r.data)
		r.data = nil
	}
	if r.err != nil {
		return fmt.Errorf("%s: %w", r.path, r.err)
	}
	return nil
}

func (r *StateReader) fill(p []byte) {
	if r.err != nil {
		return
	}
	if r.data != nil {
		if int64(len(p)) > r.size-r.read {
			r.err = fmt.Errorf("truncated: %w", io.ErrUnexpectedEOF)
			return
		}
		copy(p, r.data[r.read:])
	} else if _, err := io.ReadFull(r.r, p); err != nil {
		r.err = fmt.Errorf("truncated: %w", err)
		return
	}
	r.crc = crc32.Update(r.crc, castagnoli, p)
	r.read += int64(len(p))
}

func (r *StateReader) bytes(n int) []byte {
	p := make([]byte, n)
	r.fill(p)
	return p
}

func (r *StateReader) uvarint() uint64 {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		var b [1]byte
		r.fill(b[:])
		if r.err != nil {
			return 0
		}
		x |= uint64(b[0]&0x7f) << shift
		if b[0] < 0x80 {
			return x
		}
	}
	r.err = errors.New("bad varint")
	return 0
}

// VerifyFile checks that the file path has size bytes and that its last 4
// bytes are the CRC-32C of the others and equal crc, reading it as a
// stream.
func VerifyFile(fsys vfs.FS, path string, size int64, crc uint32) error {
	f, err := fsys.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.Size() != size || size < 4 {
		return fmt.Errorf("%s: %d bytes, the manifest says %d: the file is truncated or damaged", path, info.Size(), size)
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size-4)); err != nil {
		return err
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != h.Sum32() || got != crc {
		return fmt.Errorf("%s: checksum mismatch: the file is damaged", path)
	}
	return nil
}

// VerifyRaw checks a file stored as another program wrote it (a Pebble
// store's): that it has size bytes and, unless crc is 0, that its
// CRC-32C is crc. An sstable is stored with crc 0: Pebble checks the
// checksum of each of its blocks when it reads it.
func VerifyRaw(fsys vfs.FS, path string, size int64, crc uint32) error {
	info, err := fsys.Stat(path)
	if err != nil {
		return err
	}
	if info.Size() != size {
		return fmt.Errorf("%s: %d bytes, the manifest says %d: the file is truncated or damaged", path, info.Size(), size)
	}
	if crc == 0 {
		return nil
	}
	f, err := fsys.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if h.Sum32() != crc {
		return fmt.Errorf("%s: checksum mismatch: the file is damaged", path)
	}
	return nil
}

// Checksum is the CRC-32C of data, as state files and manifests use it.
func Checksum(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

// UpdateChecksum adds data to a running CRC-32C.
func UpdateChecksum(crc uint32, data []byte) uint32 { return crc32.Update(crc, castagnoli, data) }
