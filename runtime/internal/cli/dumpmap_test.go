package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestDumpMapState dumps a process's main state and the entries of its
// map state (state "map.M" of the node, keys written as the node's key
// and then the map's key in its order), one line each.
func TestDumpMapState(t *testing.T) {
	st, write := stateFiles(t)
	value := func(w *codec.Writer, a int64) {
		m := w.Begin()
		w.Tag(1, codec.Varint)
		w.Varint(a)
		w.End(m)
	}
	main := write("n-0.state", func(w *codec.Writer) {
		m := w.Begin()
		w.String("card")
		value(w, 2)
		w.End(m)
	})
	mf := write("n-map.M-0.state", func(w *codec.Writer) {
		for _, e := range []struct {
			k string
			v int64
		}{{"a\x00b", 5}, {"zoo", 7}} {
			m := w.Begin()
			w.String("card")
			w.OrderedString(e.k)
			value(w, e.v)
			w.End(m)
		}
	})
	mf.State = "map.M"
	m := &storage.Manifest{ID: 1, Job: "j", MaxParallelism: 1, Nodes: []storage.NodeState{{UID: "n", Name: "n", Kind: "process", Parallelism: 1,
		KeySchema: "string", ValueSchema: "p.S{1 N int64; 2 M mapstate[string]p.V{1 A int64}}", Files: []storage.StateFile{main, mf}}}}
	if err := st.Commit(m); err != nil {
		t.Fatal(err)
	}
	l, err := st.Load(1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Nodes: []config.NodeConfig{{Name: "n", UID: "n", Kind: "process"}}}
	var out bytes.Buffer
	if err := dumpNode(cfg, l, "n", &out); err != nil {
		t.Fatal(err)
	}
	want := `{"key":"card","keyGroup":0,"value":{"N":2}}
{"key":"card","keyGroup":0,"map":"M","mapKey":"a\u0000b","value":{"A":5}}
{"key":"card","keyGroup":0,"map":"M","mapKey":"zoo","value":{"A":7}}
`
	if got := out.String(); got != want {
		t.Errorf("dump:\n%s\nwant\n%s", got, want)
	}
	// With a state-ttl, each value follows its write time.
	withTTL := func(w *codec.Writer, a int64) { w.Varint(1234); value(w, a) }
	main = write("n-0.state", func(w *codec.Writer) {
		m := w.Begin()
		w.String("card")
		withTTL(w, 2)
		w.End(m)
	})
	mf = write("n-map.M-0.state", func(w *codec.Writer) {
		m := w.Begin()
		w.String("card")
		w.OrderedString("zoo")
		withTTL(w, 7)
		w.End(m)
	})
	mf.State = "map.M"
	l.Manifest.Nodes[0].ValueSchema = "ttl(p.S{1 N int64; 2 M mapstate[string]p.V{1 A int64}})"
	l.Manifest.Nodes[0].Files = []storage.StateFile{main, mf}
	out.Reset()
	if err := dumpNode(cfg, l, "n", &out); err != nil {
		t.Fatal(err)
	}
	want = `{"key":"card","keyGroup":0,"value":{"N":2},"written":1234}
{"key":"card","keyGroup":0,"map":"M","mapKey":"zoo","value":{"A":7},"written":1234}
`
	if got := out.String(); got != want {
		t.Errorf("dump with a ttl:\n%s\nwant\n%s", got, want)
	}
	// A map state the state type has no field for is an error, not
	// silence.
	l.Manifest.Nodes[0].ValueSchema = "ttl(p.S{1 N int64})"
	if err := dumpNode(cfg, l, "n", &out); err == nil || !strings.Contains(err.Error(), "no pipegen.MapState field") {
		t.Errorf("dump with no map field in the schema: %v", err)
	}
}

// TestDumpBroadcast dumps a process's broadcast state (state "broadcast"
// of the node, one copy, read by the schema the manifest records for it)
// after its keyed state; without a recorded schema (a checkpoint from
// before it was recorded) the broadcast state is left out, not misread.
func TestDumpBroadcast(t *testing.T) {
	st, write := stateFiles(t)
	main := write("check-0.state", func(w *codec.Writer) {
		m := w.Begin()
		w.String("card-1")
		w.Varint(3)
		w.End(m)
	})
	bc := write("check+broadcast-0.state", func(w *codec.Writer) {
		for _, r := range []struct {
			cat string
			max int64
		}{{"books", 100}, {"games", 250}} {
			m := w.Begin()
			w.String(r.cat)
			v := w.Begin()
			w.Tag(1, codec.Varint)
			w.Varint(r.max)
			w.End(v)
			w.End(m)
		}
	})
	bc.State = "broadcast"
	m := &storage.Manifest{ID: 1, Job: "j", MaxParallelism: 1, Nodes: []storage.NodeState{{UID: "check", Name: "check", Kind: "process", Parallelism: 1,
		KeySchema: "string", ValueSchema: "int64", BroadcastSchema: "map[string]p.Rule{1 Max int64}", Files: []storage.StateFile{main, bc}}}}
	if err := st.Commit(m); err != nil {
		t.Fatal(err)
	}
	l, err := st.Load(1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Nodes: []config.NodeConfig{{Name: "check", UID: "check", Kind: "process"}}}
	var out bytes.Buffer
	if err := dumpNode(cfg, l, "check", &out); err != nil {
		t.Fatal(err)
	}
	want := `{"key":"card-1","keyGroup":0,"value":3}
{"broadcast":true,"key":"books","value":{"Max":100}}
{"broadcast":true,"key":"games","value":{"Max":250}}
`
	if got := out.String(); got != want {
		t.Errorf("dump:\n%s\nwant\n%s", got, want)
	}
	l.Manifest.Nodes[0].BroadcastSchema = ""
	out.Reset()
	if err := dumpNode(cfg, l, "check", &out); err != nil {
		t.Fatal(err)
	}
	if want := "{\"key\":\"card-1\",\"keyGroup\":0,\"value\":3}\n"; out.String() != want {
		t.Errorf("dump without a broadcast schema:\n%s\nwant\n%s", out.String(), want)
	}
}

// stateFiles prepares checkpoint 1 in a memory file system and returns
// its storage and a function that writes a state file of one key group
// holding what entries encodes.
func stateFiles(t *testing.T) (*storage.Storage, func(name string, entries func(w *codec.Writer)) storage.StateFile) {
	t.Helper()
	st := &storage.Storage{FS: vfs.NewMem(), Dir: "/ckpt"}
	if err := st.Prepare(1); err != nil {
		t.Fatal(err)
	}
	return st, func(name string, entries func(w *codec.Writer)) storage.StateFile {
		sw, err := st.CreateState(1, name, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		w := codec.NewWriter(nil)
		entries(w)
		sw.Section(w.Bytes())
		size, crc, err := sw.Close()
		if err != nil {
			t.Fatal(err)
		}
		return storage.StateFile{Name: name, KeyGroups: [2]int{0, 1}, Size: size, CRC: crc}
	}
}
