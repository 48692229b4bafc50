package triggers

import (
	"bytes"
	"os"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestOutput checks that want/output.txt is the triggers case's, which
// that case's TestOutput computes without pipegen's engines: the same
// pipeline gives the same output on pebble as on memory.
func TestOutput(t *testing.T) {
	got, err := os.ReadFile("want/output.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../triggers/want/output.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("want/output.txt differs from ../triggers/want/output.txt (%d bytes, %d there)", len(got), len(want))
	}
}
