package compile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
)

// TestCheckTooLarge: a pipeline file is read up to MaxPipelineSize, so
// that a wrong file (a log, /dev/zero) gets a clear message rather than
// all the memory.
func TestCheckTooLarge(t *testing.T) {
	const limit = 4 << 20
	big := filepath.Join(t.TempDir(), "pipeline.yaml")
	data := append([]byte("version: 1\nname: big\n"), bytes.Repeat([]byte("# a comment\n"), limit/12+1)...)
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		files = append(files, "/dev/zero")
	}
	for _, file := range files {
		_, err := compile.Check(file)
		if _, diags := compile.IsDiagnostics(err); err == nil || diags || !strings.Contains(err.Error(), file+" is larger than 4 MiB") {
			t.Errorf("Check(%s): %v, want an error saying it is larger than 4 MiB", file, err)
		}
	}
	// Up to the limit, the file is read.
	if err := os.WriteFile(big, data[:limit], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := compile.Check(big); err == nil || strings.Contains(err.Error(), "larger") {
		t.Errorf("Check of a file of 4 MiB: %v, want the pipeline's problems", err)
	}
}
