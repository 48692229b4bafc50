package verify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadCommittedHeader: with a header, the first line of each
// committed file is dropped, and must be the same in every file.
func TestReadCommittedHeader(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("part-00000-0000000000", "id,name\n2,b\n1,a\n")
	write("part-00000-0000000001", "id,name\n3,c\n")
	write(".part-00000-0000000002.inprogress", "id,name\n4,d\n")
	got, err := readCommitted(dir, true)
	if want := []string{"1,a", "2,b", "3,c"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if got, _ := readCommitted(dir, false); len(got) != 5 {
		t.Errorf("without header: %q", got)
	}
	write("part-00001-0000000000", "name,id\nx,9\n")
	if _, err := readCommitted(dir, true); err == nil || !strings.Contains(err.Error(), `part-00001-0000000000 starts with header "name,id"`) {
		t.Errorf("two headers: %v", err)
	}
}
