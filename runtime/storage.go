package runtime

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// The checkpoint directory holds one folder per checkpoint:
//
//	DIR/chk-000007/counts-0.state   keyed state of subtask 0 of "counts"
//	DIR/chk-000007/MANIFEST         written last: the commit point
//
// A state file holds one section per key group of its subtask's range and
// ends with a CRC-32C of everything before it. The manifest is JSON followed
// by a line with its own CRC-32C; it is written to MANIFEST.tmp, synced,
// renamed and the folder synced, so a checkpoint either has a whole,
// durable manifest or none.

// manifestFormat is the version of the checkpoint layout.
const manifestFormat = 1

// Manifest describes one completed checkpoint.
type Manifest struct {
	Format         int         `json:"format"`
	ID             int64       `json:"id"`
	Job            string      `json:"job"`
	Time           time.Time   `json:"time"`
	Final          bool        `json:"final,omitempty"`
	Mode           string      `json:"mode"`
	MaxParallelism int         `json:"maxParallelism"`
	Nodes          []NodeState `json:"nodes"`
	Stats          Stats       `json:"stats"`
}

// NodeState is what one node contributed to a checkpoint.
type NodeState struct {
	UID         string `json:"uid"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Parallelism int    `json:"parallelism"`
	// KeySchema and ValueSchema describe the keyed state's types, field
	// ids included, so that a later version can tell what it reads.
	KeySchema   string        `json:"keySchema,omitempty"`
	ValueSchema string        `json:"valueSchema,omitempty"`
	Files       []StateFile   `json:"files,omitempty"`
	Sources     []SourceState `json:"sources,omitempty"`
	Sinks       []SinkState   `json:"sinks,omitempty"`
	// Subtasks hold each subtask's event-time progress.
	Subtasks []SubtaskState `json:"subtasks,omitempty"`
}

// SubtaskState is the event-time progress of one subtask: the watermarks
// of its inbox's senders, or its source's watermark generator.
type SubtaskState struct {
	Subtask    int     `json:"subtask"`
	Watermarks []int64 `json:"watermarks,omitempty"`
	Generator  []byte  `json:"generator,omitempty"`
}

// StateFile is the keyed state of one subtask.
type StateFile struct {
	Subtask int `json:"subtask"`
	// State names one of several states of a node ("" for its main one).
	State     string `json:"state,omitempty"`
	Name      string `json:"name"`
	KeyGroups [2]int `json:"keyGroups"` // [start, end)
	Size      int64  `json:"size"`
	CRC       uint32 `json:"crc"`
}

// SourceState is a source subtask's read position.
type SourceState struct {
	Subtask  int    `json:"subtask"`
	Position []byte `json:"position"`
	// AtEnd is set when the subtask had read all of its input.
	AtEnd bool `json:"atEnd,omitempty"`
}

// SinkState is a transactional sink subtask's state: the files that hold
// records up to this checkpoint and are not committed yet, and the number
// its next file takes.
type SinkState struct {
	Subtask int           `json:"subtask"`
	NextSeq uint64        `json:"nextSeq"`
	Dir     string        `json:"dir"`
	Pending []PendingFile `json:"pending,omitempty"`
}

// PendingFile is a sink file that the checkpoint commits.
type PendingFile struct {
	Seq     uint64 `json:"seq"`
	Pending string `json:"pending"` // hidden name while pending
	Final   string `json:"final"`   // visible name once committed
}

// Stats are a checkpoint's figures, as logged when it completes.
type Stats struct {
	Duration     time.Duration `json:"duration"`
	Alignment    time.Duration `json:"alignment"`
	BytesWritten int64         `json:"bytesWritten"`
	StateSize    int64         `json:"stateSize"`
}

// Node returns the state of the node with the given uid, or nil.
func (m *Manifest) Node(uid string) *NodeState {
	for i := range m.Nodes {
		if m.Nodes[i].UID == uid {
			return &m.Nodes[i]
		}
	}
	return nil
}

// Storage is a checkpoint directory.
type Storage struct {
	FS  vfs.FS
	Dir string
}

func checkpointName(id int64) string { return fmt.Sprintf("chk-%06d", id) }

func (s *Storage) path(id int64, name ...string) string {
	return filepath.Join(append([]string{s.Dir, checkpointName(id)}, name...)...)
}

// Prepare creates the folder of checkpoint id and makes its entry durable.
func (s *Storage) Prepare(id int64) error {
	if err := mkdirAllDurable(s.FS, s.Dir); err != nil {
		return err
	}
	if err := s.FS.MkdirAll(s.path(id), 0o755); err != nil {
		return err
	}
	return vfs.SyncDir(s.FS, s.Dir)
}

// mkdirAllDurable is MkdirAll that also syncs the parent of every
// directory it creates: a file is durable only when every directory entry
// on its path is, and a checkpoint directory (or a sink's) made by the
// first run of a job is new.
func mkdirAllDurable(fsys vfs.FS, dir string) error {
	if info, err := fsys.Stat(dir); err == nil && info.IsDir() {
		return nil
	}
	var missing []string // deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := vfs.SyncDir(fsys, filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}

// stateMagic starts every state file.
var stateMagic = []byte("PGS1")

// EncodeStateFile lays out the sections of key groups [start, end).
func EncodeStateFile(start int, sections [][]byte) []byte {
	w := codec.NewWriter(append([]byte(nil), stateMagic...))
	w.Uvarint(uint64(start))
	w.Uvarint(uint64(len(sections)))
	for _, sec := range sections {
		w.ByteSlice(sec)
	}
	return w.Bytes()
}

// DecodeStateFile returns the first key group and the sections of a state
// file's content (without its checksum).
func DecodeStateFile(data []byte) (start int, sections [][]byte, err error) {
	if !bytes.HasPrefix(data, stateMagic) {
		return 0, nil, fmt.Errorf("not a state file")
	}
	r := codec.NewReader(data[len(stateMagic):])
	start = int(r.Uvarint())
	n := r.Count()
	for range n {
		sections = append(sections, r.ByteSlice())
	}
	return start, sections, r.Err()
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteState writes a state file of checkpoint id, with its checksum, and
// syncs it.
func (s *Storage) WriteState(id int64, name string, content []byte) (size int64, crc uint32, err error) {
	crc = crc32.Checksum(content, castagnoli)
	data := binary.LittleEndian.AppendUint32(content, crc)
	if err := vfs.WriteFileSync(s.FS, s.path(id, name), data); err != nil {
		return 0, 0, err
	}
	return int64(len(data)), crc, nil
}

// Commit writes the manifest of a checkpoint whose state files are all
// written: the checkpoint is complete once it returns.
func (s *Storage) Commit(m *Manifest) error {
	// The state files' directory entries must be durable before the
	// manifest that names them.
	if err := vfs.SyncDir(s.FS, s.path(m.ID)); err != nil {
		return err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	data = fmt.Appendf(data, "crc32c %08x\n", crc32.Checksum(data, castagnoli))
	return vfs.AtomicWriteFile(s.FS, s.path(m.ID, "MANIFEST"), data)
}

// Entry is one folder of the checkpoint directory.
type Entry struct {
	ID int64
	// Complete is set when the folder has a manifest.
	Complete bool
}

// List returns the checkpoint folders, oldest first.
func (s *Storage) List() ([]Entry, error) {
	dirs, err := s.FS.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, d := range dirs {
		idText, ok := strings.CutPrefix(d.Name(), "chk-")
		if !ok || !d.IsDir() {
			continue
		}
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			continue
		}
		_, err = s.FS.Stat(s.path(id, "MANIFEST"))
		out = append(out, Entry{ID: id, Complete: err == nil})
	}
	slices.SortFunc(out, func(a, b Entry) int { return int(a.ID - b.ID) })
	return out, nil
}

// ReadManifest reads and verifies the manifest of checkpoint id.
func (s *Storage) ReadManifest(id int64) (*Manifest, error) {
	return readManifest(s.FS, s.path(id, "MANIFEST"))
}

func readManifest(fsys vfs.FS, path string) (*Manifest, error) {
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndex(data, []byte("crc32c "))
	if i < 0 {
		return nil, fmt.Errorf("%s: no checksum line", path)
	}
	var want uint32
	if _, err := fmt.Sscanf(string(data[i:]), "crc32c %08x\n", &want); err != nil || string(data[i:]) != fmt.Sprintf("crc32c %08x\n", want) {
		return nil, fmt.Errorf("%s: bad checksum line", path)
	}
	if got := crc32.Checksum(data[:i], castagnoli); got != want {
		return nil, fmt.Errorf("%s: checksum mismatch (%08x, want %08x): the file is damaged", path, got, want)
	}
	var m Manifest
	if err := json.Unmarshal(data[:i], &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("%s: checkpoint format %d, this program reads %d", path, m.Format, manifestFormat)
	}
	return &m, nil
}

// Loaded is a verified checkpoint: its manifest and the content of its
// state files.
type Loaded struct {
	Manifest *Manifest
	Dir      string
	files    map[string][]byte
}

// Load reads checkpoint id and verifies every file against its checksum.
func (s *Storage) Load(id int64) (*Loaded, error) {
	return loadCheckpoint(s.FS, s.path(id))
}

func loadCheckpoint(fsys vfs.FS, dir string) (*Loaded, error) {
	m, err := readManifest(fsys, filepath.Join(dir, "MANIFEST"))
	if err != nil {
		return nil, err
	}
	l := &Loaded{Manifest: m, Dir: dir, files: map[string][]byte{}}
	for _, n := range m.Nodes {
		for _, f := range n.Files {
			path := filepath.Join(dir, f.Name)
			data, err := vfs.ReadFile(fsys, path)
			if err != nil {
				return nil, err
			}
			if int64(len(data)) != f.Size || len(data) < 4 {
				return nil, fmt.Errorf("%s: %d bytes, the manifest says %d: the file is truncated or damaged", path, len(data), f.Size)
			}
			content := data[:len(data)-4]
			crc := binary.LittleEndian.Uint32(data[len(data)-4:])
			if got := crc32.Checksum(content, castagnoli); got != crc || crc != f.CRC {
				return nil, fmt.Errorf("%s: checksum mismatch: the file is damaged", path)
			}
			l.files[f.Name] = content
		}
	}
	return l, nil
}

// Remove deletes checkpoint id.
func (s *Storage) Remove(id int64) error {
	return s.FS.RemoveAll(s.path(id))
}
