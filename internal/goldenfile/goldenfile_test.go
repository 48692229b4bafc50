package goldenfile

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryTestPackageHasTheFlag keeps go test ./... -update working: a
// test binary that does not link this package fails on the flag, and
// make golden with it.
func TestEveryTestPackageHasTheFlag(t *testing.T) {
	const self = "github.com/pipegen/pipegen/internal/goldenfile"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	packages := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != root {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own (examples/annotated)
			}
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil || len(pkg.TestGoFiles)+len(pkg.XTestGoFiles) == 0 {
			return nil
		}
		packages++
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.FromSlash("internal/goldenfile") {
			return nil
		}
		if !slices.Contains(pkg.TestImports, self) && !slices.Contains(pkg.XTestImports, self) {
			t.Errorf("%s: no test file imports %s (blank will do): go test ./... -update fails there on the flag", rel, self)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if packages < 50 {
		t.Fatalf("found %d packages with tests under %s; expected the module's, more than 50", packages, root)
	}
}
