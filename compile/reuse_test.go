package compile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestReuseBuilds: after ReuseBuilds, Builds of the same files at once
// make one program, linked to each output; once its binaries are removed
// the next Build builds again, and the one after links that one's. Not
// parallel: it turns the reuse on for the whole process, and sets it back
// before the parallel tests (which change packages and build again) run.
func TestReuseBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	reused.Lock()
	was := reused.on
	reused.Unlock()
	if was {
		t.Fatal("ReuseBuilds is on before the test: it would not be set back")
	}
	ReuseBuilds()
	defer func() {
		reused.Lock()
		reused.on, reused.progs = false, nil
		reused.Unlock()
	}()
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
	sameFile(t, out("a"), out("b"))
	for _, name := range []string{"a", "b"} {
		if err := os.Remove(out(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"c", "d"} {
		if err := res.Build(out(name)); err != nil {
			t.Fatal(err)
		}
	}
	sameFile(t, out("c"), out("d"))
	if fi, err := os.Stat(out("c")); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable: %v", out("c"), err)
	}
}

// sameFile checks that a and b are one file (hard links).
func sameFile(t *testing.T, a, b string) {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fa, fb) {
		t.Errorf("%s and %s are two files, want one linked to both", a, b)
	}
}
