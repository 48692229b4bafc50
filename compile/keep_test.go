package compile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/ir"
)

// version is a Result of the pipeline in module dir with main.go of the
// given content, as keepSource sees one.
func version(dir, content string) *Result {
	return &Result{
		IR: &ir.Pipeline{Name: "p", ModuleDir: dir, Source: "pipeline.yaml"},
		Files: []codegen.File{
			{Name: "main.go", Content: []byte(content)},
			{Name: "pipeline.go", Content: []byte("package main // " + content)},
		},
	}
}

// TestKeepSourceVersions: each generated version of a pipeline is kept
// in a directory of its own that no other version writes, builds of
// different versions at the same time keep each their own files, and
// only the keptVersions most recently built stay.
func TestKeepSourceVersions(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	module := t.TempDir()

	// Concurrent builds of two versions, as two pipegen versions
	// building one pipeline file at once.
	var wg sync.WaitGroup
	dirs := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				dirs[i], errs[i] = version(module, fmt.Sprintf("v%d", i)).keepSource()
				if errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("version %d: %v", i, err)
		}
	}
	if dirs[0] == dirs[1] || filepath.Dir(dirs[0]) != filepath.Dir(dirs[1]) {
		t.Fatalf("versions kept in %s and %s: want two directories of one pipeline", dirs[0], dirs[1])
	}
	for i, dir := range dirs {
		for _, f := range version(module, fmt.Sprintf("v%d", i)).Files {
			if data, err := os.ReadFile(filepath.Join(dir, f.Name)); err != nil || !bytes.Equal(data, f.Content) {
				t.Errorf("%s of version %d in %s is %q (%v), want %q", f.Name, i, dir, data, err, f.Content)
			}
		}
	}

	// A rebuilt version keeps its directory and loses a stray file.
	stray := filepath.Join(dirs[0], "old.go")
	if err := os.WriteFile(stray, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if dir, err := version(module, "v0").keepSource(); err != nil || dir != dirs[0] {
		t.Fatalf("v0 rebuilt into %s (%v), want %s", dir, err, dirs[0])
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", stray, err)
	}

	// Build more versions, each later than the last: the oldest go.
	pipeline := filepath.Dir(dirs[0])
	old := time.Now().Add(-time.Hour)
	for i, dir := range dirs {
		os.Chtimes(dir, old.Add(time.Duration(i)*time.Minute), old.Add(time.Duration(i)*time.Minute))
	}
	var latest []string
	for i := range keptVersions {
		dir, err := version(module, fmt.Sprintf("w%d", i)).keepSource()
		if err != nil {
			t.Fatal(err)
		}
		os.Chtimes(dir, old.Add(time.Duration(10+i)*time.Minute), old.Add(time.Duration(10+i)*time.Minute))
		latest = append(latest, filepath.Base(dir))
	}
	entries, err := os.ReadDir(pipeline)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, e := range entries {
		kept = append(kept, e.Name())
	}
	if len(kept) != keptVersions {
		t.Fatalf("%s holds %v, want the %d latest versions %v", pipeline, kept, keptVersions, latest)
	}
	for _, name := range latest {
		if _, err := os.Stat(filepath.Join(pipeline, name)); err != nil {
			t.Errorf("latest version %s is gone: %v", name, err)
		}
	}
}
