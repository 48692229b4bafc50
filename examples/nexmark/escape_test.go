package nexmark_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/nexmark"
)

// TestRecordsStayOnStack compiles every query's generated program with the
// compiler's escape analysis printed (-gcflags=-m) and fails when it moves
// a record of the generated code to the heap: an allocation per record.
// Records cross the generated methods by reference (a sender passes its
// record's address to the direct method of the chain that runs in its
// goroutine), which is only free while nothing the receiver calls keeps
// that address.
func TestRecordsStayOnStack(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling every query is skipped in -short mode")
	}
	moved := regexp.MustCompile(`pipeline\.go:\d+:\d+: moved to heap: (r|rec|recs)$`)
	for _, q := range nexmark.Queries {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			res, err := compile.Generate(filepath.Join("queries", q+".yaml"), compile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Built as compile.Build does: an overlay of a package in the
			// module.
			tmp := t.TempDir()
			name := "pipegen_escape_" + strings.ReplaceAll(q, "-", "_")
			pkg := filepath.Join(res.IR.ModuleDir, name)
			overlay := struct{ Replace map[string]string }{Replace: map[string]string{}}
			for _, f := range res.Files {
				src := filepath.Join(tmp, f.Name)
				if err := os.WriteFile(src, f.Content, 0o644); err != nil {
					t.Fatal(err)
				}
				overlay.Replace[filepath.Join(pkg, f.Name)] = src
			}
			data, err := json.Marshal(overlay)
			if err != nil {
				t.Fatal(err)
			}
			overlayFile := filepath.Join(tmp, "overlay.json")
			if err := os.WriteFile(overlayFile, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "build", "-overlay", overlayFile, "-gcflags=-m", "-o", os.DevNull, "./"+name)
			cmd.Dir = res.IR.ModuleDir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go build -gcflags=-m of the generated program of %s: %v\n%s", q, err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if moved.MatchString(line) {
					t.Errorf("%s: the generated code moves a record to the heap, an allocation per record: %s", q, line)
				}
			}
		})
	}
}
