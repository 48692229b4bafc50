package dsl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pipegen/pipegen/diag"
)

// TestPreload: after Preload, a load of a preloaded package directory, by
// any path to it, reuses the package that one go list loaded; a package
// with errors is not kept, so that its compile loads and reports them.
func TestPreload(t *testing.T) {
	defer func() {
		packageCache.Lock()
		packageCache.on, packageCache.pkgs = false, nil
		packageCache.Unlock()
	}()
	// Inside the module (a temporary folder is not), beside the fixtures.
	broken, err := os.MkdirTemp("testdata", "broken-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(broken)
	if err := os.WriteFile(filepath.Join(broken, "b.go"), []byte("package broken\n\nvar X int = \"not an int\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Preload(filepath.Join("testdata", "keys-ok"), broken); err != nil {
		t.Fatal(err)
	}
	load := func(dir, pattern string) (*userPackage, *diag.List) {
		rep := &reporter{diags: &diag.List{}, syntax: yamlSyntax{}}
		return loadPackage(dir, pattern, diag.Pos{File: dir}, rep), rep.diags
	}
	a, da := load(filepath.Join("testdata", "keys-ok"), ".")
	b, db := load("testdata", "./keys-ok")
	if a == nil || b == nil {
		t.Fatalf("keys-ok did not load: %v; %v", da, db)
	}
	if a.pkg != b.pkg {
		t.Error("two loads of a preloaded folder loaded it twice")
	}
	if u, d := load(broken, "."); u != nil || d.Len() == 0 {
		t.Errorf("a package with a type error loaded without errors (%v)", d)
	}
	packageCache.Lock()
	kept := len(packageCache.pkgs)
	packageCache.Unlock()
	if kept != 1 {
		t.Errorf("%d packages kept, want keys-ok's only", kept)
	}
}
