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
	fresh(t)
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

// fresh empties the package cache for the test and puts back the one of
// the other tests (TestMain's) after it.
func fresh(t *testing.T) {
	packageCache.Lock()
	on, pkgs := packageCache.on, packageCache.pkgs
	packageCache.on, packageCache.pkgs = false, nil
	packageCache.Unlock()
	t.Cleanup(func() {
		packageCache.Lock()
		packageCache.on, packageCache.pkgs = on, pkgs
		packageCache.Unlock()
	})
}

// TestCacheSeesChanges: a kept package is loaded again when a file of its
// folder, or its module's go.mod, changed since it was loaded, and reused
// while nothing did.
func TestCacheSeesChanges(t *testing.T) {
	fresh(t)
	CachePackages()
	dir := writePackage(t, map[string]string{"a.go": "package p\n\nfunc F(x int) int { return x }\n"})
	load := func() *userPackage {
		t.Helper()
		rep := &reporter{diags: &diag.List{}, syntax: yamlSyntax{}}
		u := loadPackage(dir, ".", diag.Pos{File: dir}, rep)
		if u == nil {
			t.Fatalf("the package did not load: %v", rep.diags)
		}
		return u
	}
	signature := func(u *userPackage) string {
		return u.pkg.Types.Scope().Lookup("F").Type().String()
	}
	first := load()
	if again := load(); again.pkg != first.pkg {
		t.Error("a second load of an unchanged folder loaded it again")
	}
	// A rewrite of the same size: only the modification time tells.
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package p\n\nfunc F(x any) any { return x }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := load()
	if got := signature(changed); got != "func(x any) any" {
		t.Errorf("after a.go changed, F is %s, want func(x any) any: the kept package was reused", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte("package p\n\nfunc G() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u := load(); u.pkg.Types.Scope().Lookup("G") == nil {
		t.Error("after b.go was added, the kept package without G was reused")
	}
	kept := load()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u := load(); u.pkg == kept.pkg {
		t.Error("after go.mod changed, the kept package was reused")
	}
}
