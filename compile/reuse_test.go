package compile

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestReuseBuilds: after ReuseBuilds, Builds of the same files at once
// make one program, linked to each output and kept; once those outputs
// are removed (their tests ended) the next Build still links the kept
// one; once that is removed too the next Build builds again, and the one
// after links that one's. stop removes the kept binaries. Not parallel:
// it turns the reuse on for the whole process, and sets it back before
// the parallel tests (which change packages and build again) run.
func TestReuseBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	stop, err := ReuseBuilds()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if reusing() {
			stop()
		}
	}()
	if _, err := ReuseBuilds(); err == nil {
		t.Error("a second ReuseBuilds did not fail: two stops would remove one folder")
	}
	res, err := Generate(filepath.Join("testdata", "panics", "pipeline.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, name := range []string{"a", "b"} {
		wg.Go(func() { errs[i] = res.Build(out(name)) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	sameFile(t, out("a"), out("b"), true)
	key := res.reuseKey()
	kept := filepath.Join(reused.dir, hex.EncodeToString(key[:]))
	sameFile(t, out("a"), kept, true)
	for _, name := range []string{"a", "b"} {
		if err := os.Remove(out(name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := res.Build(out("c")); err != nil {
		t.Fatal(err)
	}
	sameFile(t, out("c"), kept, true)
	if err := os.Remove(kept); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"d", "e"} {
		if err := res.Build(out(name)); err != nil {
			t.Fatal(err)
		}
	}
	sameFile(t, out("d"), out("c"), false)
	sameFile(t, out("d"), out("e"), true)
	if fi, err := os.Stat(out("d")); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable: %v", out("d"), err)
	}
	keptDir := reused.dir
	stop()
	if _, err := os.Stat(keptDir); !os.IsNotExist(err) {
		t.Errorf("stop left the kept binaries' folder %s: %v", keptDir, err)
	}
	if reusing() {
		t.Error("the builds are still reused after stop")
	}
}

// sameFile checks that a and b are one file (hard links), or two when
// want is false.
func sameFile(t *testing.T, a, b string, want bool) {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := os.SameFile(fa, fb); got != want {
		if want {
			t.Errorf("%s and %s are two files, want one linked to both", a, b)
		} else {
			t.Errorf("%s and %s are one file, want a new build", a, b)
		}
	}
}
