package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/vfs"
)

func testManifest(id int64) *Manifest {
	return &Manifest{
		Format:         manifestFormat,
		ID:             id,
		Job:            "sum",
		Time:           time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC),
		Mode:           "exactly-once",
		MaxParallelism: 128,
		Nodes: []NodeState{
			{UID: "gen", Name: "gen", Kind: "source", Parallelism: 2, Sources: []SourceState{
				{Subtask: 0, Position: []byte{1, 2}}, {Subtask: 1, Position: []byte{3}, AtEnd: true}}},
			{UID: "sum", Name: "sum", Kind: "aggregate", Parallelism: 2, KeySchema: "int64", ValueSchema: "int64"},
			{UID: "out", Name: "out", Kind: "sink", Parallelism: 2, Sinks: []SinkState{
				{Subtask: 0, NextSeq: 3, Path: "out", Pending: []PendingFile{{Seq: 2, Pending: ".part-00000-0000000002.pending", Final: "part-00000-0000000002"}}}}},
		},
		Stats: Stats{Duration: time.Second, Alignment: time.Millisecond, BytesWritten: 99, StateSize: 42},
	}
}

// writeCheckpoint writes checkpoint id with a state file for each of
// contents, named sum-SUB.state.
func writeCheckpoint(t *testing.T, st *Storage, id int64, contents ...[]byte) *Manifest {
	t.Helper()
	if err := st.Prepare(id); err != nil {
		t.Fatal(err)
	}
	m := testManifest(id)
	for sub, c := range contents {
		name := fmt.Sprintf("sum-%d.state", sub)
		crc := crc32.Checksum(c, castagnoli)
		if err := vfs.WriteFileSync(st.FS, st.Path(id, name), binary.LittleEndian.AppendUint32(slices.Clone(c), crc)); err != nil {
			t.Fatal(err)
		}
		size := int64(len(c)) + 4
		m.Nodes[1].Files = append(m.Nodes[1].Files, StateFile{Subtask: sub, Name: name, KeyGroups: [2]int{sub * 64, sub*64 + 64}, Size: size, CRC: crc})
	}
	if err := st.Commit(m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManifestRoundTrip(t *testing.T) {
	mem := vfs.NewMem()
	st := &Storage{FS: mem, Dir: "/data/ckpt"}
	want := writeCheckpoint(t, st, 7, []byte("zero"), []byte("one"))
	// Durable once Commit returns, with nothing left behind.
	crashed := &Storage{FS: mem.CrashClone(), Dir: st.Dir}
	for _, s := range []*Storage{st, crashed} {
		got, err := s.ReadManifest(7)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back\n%+v\nwant\n%+v", got, want)
		}
		entries, _ := s.FS.ReadDir(s.Path(7))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"MANIFEST", "sum-0.state", "sum-1.state"}) {
			t.Errorf("the folder holds %v", names)
		}
	}

	data, err := vfs.ReadFile(mem, st.Path(7, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	body, line, ok := bytes.Cut(data, []byte("}\ncrc32c "))
	if !ok {
		t.Fatalf("no checksum line:\n%s", data)
	}
	body = append(body, "}\n"...)
	if want := fmt.Sprintf("%08x\n", crc32.Checksum(body, castagnoli)); string(line) != want {
		t.Errorf("checksum line %q, want %q", line, want)
	}

	// Any damage is found.
	for i := range data {
		for _, bit := range []byte{0x01, 0x20, 0x40} {
			bad := slices.Clone(data)
			bad[i] ^= bit
			if m, err := readManifestBytes(t, bad); err == nil {
				t.Fatalf("a manifest with byte %d (%q) flipped reads without error: %+v", i, data[i], m)
			}
		}
	}
	for n := range len(data) {
		if _, err := readManifestBytes(t, data[:n]); err == nil {
			t.Fatalf("a manifest cut to %d of %d bytes reads without error", n, len(data))
		}
	}

	// A manifest of another format is refused, however intact.
	other := testManifest(8)
	other.Format = manifestFormat + 1
	if err := st.Prepare(8); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(other); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadManifest(8); err == nil || !strings.Contains(err.Error(), "checkpoint format 4, this program reads formats 1 to 3") {
		t.Errorf("ReadManifest of format 4 = %v", err)
	}
}

// TestReadManifestFormat1 reads a manifest of format 1, whose sink states
// hold absolute paths: the files come out named within their sink's
// directory, and the directory as the sink's path.
func TestReadManifestFormat1(t *testing.T) {
	body := `{"format": 1, "id": 4, "job": "sum", "mode": "exactly-once", "maxParallelism": 128, "nodes": [
  {"uid": "out", "name": "out", "kind": "sink", "parallelism": 2, "sinks": [
    {"subtask": 0, "nextSeq": 3, "dir": "/home/a/job/out", "pending": [
      {"seq": 2, "pending": "/home/a/job/out/.part-0-2.pending", "final": "/home/a/job/out/part-0-2"}]},
    {"subtask": 1, "nextSeq": 1, "dir": "/home/a/job/out"}]}]}
`
	data := fmt.Appendf([]byte(body), "crc32c %08x\n", crc32.Checksum([]byte(body), castagnoli))
	m, err := readManifestBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	want := []SinkState{
		{Subtask: 0, NextSeq: 3, Path: "/home/a/job/out", Pending: []PendingFile{{Seq: 2, Pending: ".part-0-2.pending", Final: "part-0-2"}}},
		{Subtask: 1, NextSeq: 1, Path: "/home/a/job/out"},
	}
	if got := m.Node("out").Sinks; !reflect.DeepEqual(got, want) {
		t.Errorf("sinks %+v, want %+v", got, want)
	}
	if m.Format != manifestFormat {
		t.Errorf("format %d, want it upgraded to %d", m.Format, manifestFormat)
	}
}

// TestReadManifestFormat2 reads a manifest of format 2, whose windows are
// in the layout of one entry per window (which eventtime reads by each
// section's header): it is read as it is.
func TestReadManifestFormat2(t *testing.T) {
	body := `{"format": 2, "id": 4, "job": "sum", "mode": "exactly-once", "maxParallelism": 128, "nodes": [
  {"uid": "counts", "name": "counts", "kind": "aggregate", "parallelism": 1, "files": [
    {"subtask": 0, "name": "counts-0-000004.state", "shared": true, "keyGroups": [0, 128], "size": 10, "crc": 7}]}]}
`
	data := fmt.Appendf([]byte(body), "crc32c %08x\n", crc32.Checksum([]byte(body), castagnoli))
	m, err := readManifestBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Format != manifestFormat || len(m.Node("counts").Files) != 1 || m.Node("counts").Files[0].Name != "counts-0-000004.state" {
		t.Errorf("read %+v", m)
	}
}

func readManifestBytes(t *testing.T, data []byte) (*Manifest, error) {
	t.Helper()
	mem := vfs.NewMem()
	if err := vfs.WriteFileSync(mem, "/MANIFEST", data); err != nil {
		t.Fatal(err)
	}
	return readManifest(mem, "/MANIFEST")
}

func TestStorageList(t *testing.T) {
	mem := vfs.NewMem()
	st := &Storage{FS: mem, Dir: "/ckpt"}
	if entries, err := st.List(); err != nil || entries != nil {
		t.Errorf("List of a missing directory = %v, %v; want nothing", entries, err)
	}
	for _, d := range []string{"chk-000010", "chk-000002", "chk-000100", "chk-1", "chk-abc", "other", "chk-000003.old", "chk-1000000", "chk-9223372036854775807", "chk-0", "chk--4"} {
		if err := mem.MkdirAll(filepath.Join(st.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"chk-000005", "chk-000010/MANIFEST", "chk-000100/MANIFEST", "chk-1000000/MANIFEST", "chk-000002/MANIFEST.tmp", "chk-9223372036854775807/MANIFEST"} {
		if err := vfs.WriteFileSync(mem, filepath.Join(st.Dir, f), nil); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{1, false}, {2, false}, {10, true}, {100, true}, {1000000, true}}
	if !slices.Equal(entries, want) {
		t.Errorf("List = %v, want %v", entries, want)
	}
	if got := FolderName(7); got != "chk-000007" {
		t.Errorf("FolderName(7) = %s", got)
	}
}

func TestStorageLoad(t *testing.T) {
	zero, one := EncodeStateFile(0, [][]byte{[]byte("a"), nil}), EncodeStateFile(64, [][]byte{[]byte("bc")})
	newStorage := func(t *testing.T) (*Storage, *Manifest) {
		st := &Storage{FS: vfs.NewMem(), Dir: "/ckpt"}
		return st, writeCheckpoint(t, st, 3, zero, one)
	}
	st, m := newStorage(t)
	l, err := st.Load(3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Manifest, m) || l.Dir != st.Path(3) {
		t.Errorf("Load: manifest %+v in %s", l.Manifest, l.Dir)
	}
	for i, want := range [][][]byte{{[]byte("a"), nil}, {[]byte("bc")}} {
		if got := readSections(t, l, m.Nodes[1].Files[i]); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("file %d: sections %q, want %q", i, got, want)
		}
	}
	// The file on disk is the content and its CRC-32C, little-endian.
	data, _ := vfs.ReadFile(st.FS, st.Path(3, "sum-1.state"))
	if !bytes.Equal(data, binary.LittleEndian.AppendUint32(slices.Clone(one), crc32.Checksum(one, castagnoli))) {
		t.Errorf("state file %x", data)
	}

	cases := []struct {
		name   string
		damage func(st *Storage, m *Manifest)
		want   string
	}{
		{"size in manifest", func(st *Storage, m *Manifest) { m.Nodes[1].Files[1].Size++ }, "the file is truncated or damaged"},
		{"crc in manifest", func(st *Storage, m *Manifest) { m.Nodes[1].Files[0].CRC++ }, "checksum mismatch: the file is damaged"},
		{"flipped byte", func(st *Storage, m *Manifest) {
			rewriteFile(t, st.FS, st.Path(3, "sum-0.state"), func(b []byte) []byte { b[2] ^= 4; return b })
		}, "checksum mismatch: the file is damaged"},
		{"flipped checksum", func(st *Storage, m *Manifest) {
			rewriteFile(t, st.FS, st.Path(3, "sum-1.state"), func(b []byte) []byte { b[len(b)-2] ^= 4; return b })
		}, "checksum mismatch: the file is damaged"},
		{"truncated", func(st *Storage, m *Manifest) {
			rewriteFile(t, st.FS, st.Path(3, "sum-1.state"), func(b []byte) []byte { return b[:len(b)-1] })
		}, "the file is truncated or damaged"},
		{"tiny", func(st *Storage, m *Manifest) {
			rewriteFile(t, st.FS, st.Path(3, "sum-1.state"), func(b []byte) []byte { return b[:2] })
			m.Nodes[1].Files[1].Size = 2
		}, "the file is truncated or damaged"},
		{"missing", func(st *Storage, m *Manifest) { st.FS.Remove(st.Path(3, "sum-0.state")) }, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, m := newStorage(t)
			c.damage(st, m)
			if err := st.Commit(m); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Load(3); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Load = %v, want an error with %q", err, c.want)
			}
		})
	}
}

// readSections reads every section of state file f of l.
func readSections(t *testing.T, l *Loaded, f StateFile) [][]byte {
	return readSectionsWith(t, (*Loaded).Open, l, f)
}

// opener is how a test opens a state file: Open or OpenMapped.
type opener func(*Loaded, StateFile) (*StateReader, error)

func readSectionsWith(t *testing.T, open opener, l *Loaded, f StateFile) [][]byte {
	t.Helper()
	r, err := open(l, f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for kg, sec, ok := r.Next(); ok; kg, sec, ok = r.Next() {
		if kg != r.Start()+len(out) {
			t.Errorf("section %d is of key group %d, want %d", len(out), kg, r.Start()+len(out))
		}
		out = append(out, slices.Clone(sec))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if len(out) != r.Len() {
		t.Errorf("read %d sections of %d", len(out), r.Len())
	}
	return out
}

// TestStateFileRoundTrip writes state files section by section, in parts,
// and reads them back: the same sections, the same bytes as the layout
// laid out in memory, and every damage found.
func TestStateFileRoundTrip(t *testing.T) {
	// In memory, read; on the system's filesystem, mapped too.
	type fsCase struct {
		name string
		fs   func() (vfs.FS, string)
		open opener
	}
	for _, fc := range []fsCase{
		{"memory", func() (vfs.FS, string) { return vfs.NewMem(), "/ckpt" }, (*Loaded).Open},
		{"os", func() (vfs.FS, string) { return vfs.Default, t.TempDir() }, (*Loaded).Open},
		{"os mapped", func() (vfs.FS, string) { return vfs.Default, t.TempDir() }, (*Loaded).OpenMapped},
	} {
		t.Run(fc.name, func(t *testing.T) { testStateFileRoundTrip(t, fc.fs, fc.open) })
	}
}

func testStateFileRoundTrip(t *testing.T, newFS func() (vfs.FS, string), open opener) {
	cases := []struct {
		start    int
		sections [][]byte
	}{
		{0, nil},
		{5, [][]byte{nil}},
		{64, [][]byte{[]byte("a"), nil, bytes.Repeat([]byte{0xff}, 300), {0}}},
		{1 << 20, [][]byte{[]byte("x")}},
		{3, [][]byte{bytes.Repeat([]byte("big"), 200_000), []byte("small"), bytes.Repeat([]byte("z"), 70_000)}},
		// Megabytes: a mapped file's pages read are released as it goes.
		{7, [][]byte{bytes.Repeat([]byte("abcdefg"), 300_000), bytes.Repeat([]byte("hij"), 500_000), []byte("k"), bytes.Repeat([]byte("lmnop"), 700_000)}},
	}
	for _, c := range cases {
		fsys, dir := newFS()
		st := &Storage{FS: fsys, Dir: dir}
		if err := st.Prepare(1); err != nil {
			t.Fatal(err)
		}
		w, err := st.CreateState(1, "s.state", c.start, len(c.sections))
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range c.sections {
			// In two parts, which make one section.
			w.Section(sec[:len(sec)/2], sec[len(sec)/2:])
		}
		size, crc, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := vfs.ReadFile(st.FS, st.Path(1, "s.state"))
		content := EncodeStateFile(c.start, c.sections)
		if !bytes.HasPrefix(data, []byte("PGS1")) || !bytes.Equal(data, binary.LittleEndian.AppendUint32(slices.Clone(content), crc32.Checksum(content, castagnoli))) || size != int64(len(data)) || crc != crc32.Checksum(content, castagnoli) {
			t.Fatalf("start %d: the file is not the content and its checksum (size %d, crc %08x)", c.start, size, crc)
		}
		f := StateFile{Name: "s.state", Size: size, CRC: crc}
		l := &Loaded{Dir: st.Path(1), fs: st.FS}
		got := readSectionsWith(t, open, l, f)
		if len(got) != len(c.sections) {
			t.Fatalf("read %d sections, want %d", len(got), len(c.sections))
		}
		for i := range got {
			if !bytes.Equal(got[i], c.sections[i]) {
				t.Errorf("section %d: %d bytes, want %d", i, len(got[i]), len(c.sections[i]))
			}
		}
		if err := VerifyFile(st.FS, l.Path(f), size, crc); err != nil {
			t.Errorf("VerifyFile: %v", err)
		}
		// A file cut anywhere, or with a byte flipped, fails when read.
		for _, n := range []int{len(data) - 1, len(data) / 2, 5} {
			rewriteFile(t, st.FS, l.Path(f), func([]byte) []byte { return slices.Clone(data[:n]) })
			if err := readAllWith(open, l, StateFile{Name: f.Name, Size: int64(n), CRC: crc}); err == nil {
				t.Errorf("a state file cut to %d of %d bytes reads without error", n, len(data))
			}
			// The manifest's size, of the file before it was cut.
			if err := readAllWith(open, l, f); err == nil {
				t.Errorf("a state file cut to %d of %d bytes, %d in the manifest, reads without error", n, len(data), len(data))
			}
		}
		for _, i := range []int{4, len(data) / 2, len(data) - 1} {
			rewriteFile(t, st.FS, l.Path(f), func([]byte) []byte { b := slices.Clone(data); b[i] ^= 0x10; return b })
			if err := readAllWith(open, l, f); err == nil {
				t.Errorf("a state file with byte %d of %d flipped reads without error", i, len(data))
			}
		}
	}
	// Bytes after the last section are refused, not ignored; so are
	// another magic and a count of sections larger than the file.
	for name, content := range map[string][]byte{
		"trailing bytes": append(EncodeStateFile(3, [][]byte{[]byte("a")}), 0),
		"magic":          []byte("PGS2\x00\x00"),
		"huge count":     []byte("PGS1\x00\xff\xff\xff\xff\x0f"),
	} {
		fsys := vfs.NewMem()
		data := binary.LittleEndian.AppendUint32(slices.Clone(content), crc32.Checksum(content, castagnoli))
		if err := vfs.WriteFileSync(fsys, "/s.state", data); err != nil {
			t.Fatal(err)
		}
		l := &Loaded{Dir: "/", fs: fsys}
		if err := readAll(l, StateFile{Name: "s.state", Size: int64(len(data)), CRC: crc32.Checksum(content, castagnoli)}); err == nil {
			t.Errorf("%s: the file reads without error", name)
		}
	}
}

// readAll reads every section of f and returns the first error.
func readAll(l *Loaded, f StateFile) error { return readAllWith((*Loaded).Open, l, f) }

func readAllWith(open opener, l *Loaded, f StateFile) error {
	r, err := open(l, f)
	if err != nil {
		return err
	}
	for _, _, ok := r.Next(); ok; _, _, ok = r.Next() {
	}
	return r.Close()
}

// EncodeStateFile lays out the sections of key groups [start, end) in
// memory: the content of a state file without its checksum.
func EncodeStateFile(start int, sections [][]byte) []byte {
	w := codec.NewWriter(append([]byte(nil), stateMagic...))
	w.Uvarint(uint64(start))
	w.Uvarint(uint64(len(sections)))
	for _, sec := range sections {
		w.ByteSlice(sec)
	}
	return w.Bytes()
}

func TestPrepareDurable(t *testing.T) {
	mem := vfs.NewMem()
	st := &Storage{FS: mem, Dir: "/var/lib/job/ckpt"}
	if err := st.Prepare(1); err != nil {
		t.Fatal(err)
	}
	if info, err := mem.CrashClone().Stat(st.Path(1)); err != nil || !info.IsDir() {
		t.Errorf("after a crash: %v", err)
	}
	if err := vfs.WriteFileSync(mem, "/file", nil); err != nil {
		t.Fatal(err)
	}
	if err := (&Storage{FS: mem, Dir: "/file"}).Prepare(1); err == nil {
		t.Error("Prepare in a file succeeds")
	}
	if err := vfs.MkdirAllDurable(mem, "/file/sub"); err == nil {
		t.Error("mkdirAllDurable under a file succeeds")
	}
}

// rewriteFile replaces the content of a file with edit's result.
func rewriteFile(t testing.TB, fsys vfs.FS, name string, edit func([]byte) []byte) {
	t.Helper()
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileSync(fsys, name, edit(data)); err != nil {
		t.Fatal(err)
	}
}

// TestOpenMapped: a state file of the system's filesystem is mapped, one
// of another (in memory) is read; either way the sections are the same.
func TestOpenMapped(t *testing.T) {
	content := EncodeStateFile(2, [][]byte{[]byte("one"), bytes.Repeat([]byte("two"), 1_000_000), []byte("three")})
	data := binary.LittleEndian.AppendUint32(slices.Clone(content), crc32.Checksum(content, castagnoli))
	f := StateFile{Name: "s.state", Size: int64(len(data)), CRC: crc32.Checksum(content, castagnoli)}
	for _, c := range []struct {
		fsys   vfs.FS
		dir    string
		mapped bool
	}{
		{vfs.Default, t.TempDir(), runtime.GOOS != "windows" && runtime.GOOS != "plan9"},
		{vfs.NewMem(), "/", false},
	} {
		if err := vfs.WriteFileSync(c.fsys, filepath.Join(c.dir, f.Name), data); err != nil {
			t.Fatal(err)
		}
		l := &Loaded{Dir: c.dir, fs: c.fsys}
		r, err := l.OpenMapped(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.data != nil; got != c.mapped {
			t.Errorf("%T: mapped %v, want %v", c.fsys, got, c.mapped)
		}
		_, one, _ := r.Next()
		if string(one) != "one" || cap(one) != len(one) {
			t.Errorf("%T: the first section is %q with room for %d bytes, want \"one\" and no room", c.fsys, one, cap(one))
		}
		_, two, _ := r.Next()
		if !bytes.Equal(two, bytes.Repeat([]byte("two"), 1_000_000)) {
			t.Errorf("%T: the second section is %d bytes, want 3M of \"two\"", c.fsys, len(two))
		}
		// Past 1 MiB read, the pages read leave the process.
		if _, three, _ := r.Next(); string(three) != "three" || c.mapped && r.released < 2<<20 {
			t.Errorf("%T: the third section is %q, %d bytes released; want \"three\" and the 3 MB before it (mapped %v)", c.fsys, three, r.released, c.mapped)
		}
		if err := r.Close(); err != nil || r.data != nil {
			t.Errorf("%T: Close: %v, still mapped %v", c.fsys, err, r.data != nil)
		}
	}
}
