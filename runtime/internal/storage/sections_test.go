package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestReadSections: only the sections of the key groups asked for are
// read, in order, and read's error comes back with the file's name and
// the key group.
func TestReadSections(t *testing.T) {
	st := &Storage{FS: vfs.NewMem(), Dir: "/ckpt"}
	if err := st.Prepare(1); err != nil {
		t.Fatal(err)
	}
	w, err := st.CreateState(1, "s.state", 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{"a", "b", "c", "d"} {
		w.Section([]byte(sec))
	}
	size, crc, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	f := StateFile{Name: "s.state", Size: size, CRC: crc}
	l := &Loaded{Dir: st.Path(1), fs: st.FS}
	var got []string
	if err := l.ReadSections(f, 11, 13, func(kg int, sec []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", kg, sec))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "11:b 12:c" {
		t.Errorf("read %q, want the sections of key groups 11 and 12", got)
	}
	bad := errors.New("bad section")
	err = l.ReadSections(f, 0, 100, func(kg int, sec []byte) error {
		if kg == 12 {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "s.state, key group 12") {
		t.Errorf("error %v, want the read's error with the file and key group 12", err)
	}
}
