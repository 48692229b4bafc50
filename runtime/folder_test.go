package runtime

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// These tests move and copy the folder of a killed job (its checkpoint
// directory and its sink's directory, as when the working directory is
// moved with them) and resume it in the new place.

// uncommittedCrashes returns the crash points of a run of o after which
// the checkpoint to resume from still has pending files to commit: the
// crash came between its manifest and the renames of its files.
func uncommittedCrashes(t *testing.T, o *sumJob, points []crashPoint) []crashPoint {
	t.Helper()
	var out []crashPoint
	for _, cp := range points {
		id := newestIntactIn(cp.fs, o.checkpointDir())
		if id == 0 {
			continue
		}
		m, err := (&storage.Storage{FS: cp.fs, Dir: o.checkpointDir()}).ReadManifest(id)
		if err != nil {
			t.Fatal(err)
		}
		pending := false
		for _, s := range m.Node("out").Sinks {
			for _, p := range s.Pending {
				if _, err := cp.fs.Stat(filepath.Join(o.outDir(), filepath.Base(p.Pending))); err == nil {
					pending = true
				}
			}
		}
		if pending {
			out = append(out, cp)
		}
	}
	return out
}

// tree returns every file below dir in fsys, path -> content.
func tree(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			maps.Copy(files, tree(t, fsys, p))
			continue
		}
		data, err := vfs.ReadFile(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	return files
}

// copyTree copies the folder from to to, durably, as cp -r does.
func copyTree(t *testing.T, fsys vfs.FS, from, to string) {
	t.Helper()
	for p, data := range tree(t, fsys, from) {
		rel, err := filepath.Rel(from, p)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(to, rel)
		if err := vfs.MkdirAllDurable(fsys, filepath.Dir(dst)); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileSync(fsys, dst, data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMoveJobFolder kills a job at moments when the checkpoint it resumes
// from has files still to commit, moves or copies its folder, and resumes
// it in the new place: the output there is exactly once, and a copy
// leaves the original alone, which then resumes by itself as well.
func TestMoveJobFolder(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, nil)
	o.dir = "/job"
	rec := recordCrashes(o, mem)
	o.mustRun(t)
	o.started = nil
	points := uncommittedCrashes(t, o, rec.taken())
	if len(points) == 0 {
		t.Fatal("no crash point with files to commit")
	}
	// A few of them, spread over the run, are enough.
	if n := len(points); n > 4 {
		points = []crashPoint{points[0], points[n/3], points[2*n/3], points[n-1]}
	}
	moved := *o
	moved.dir = "/job2"
	for i, cp := range points {
		t.Run(fmt.Sprintf("move/%d", i), func(t *testing.T) {
			fsys := cp.fs.CrashClone()
			if err := fsys.Rename("/job", "/job2"); err != nil {
				t.Fatal(err)
			}
			moved.fs = fsys
			want := newestIntactIn(fsys, moved.checkpointDir())
			r := moved.mustRun(t)
			if got := r.restoredID(); got != want || got == 0 {
				t.Errorf("resumed from checkpoint %d, want %d", got, want)
			}
			moved.checkOutput(t, fsys)
			if h := hiddenFilesIn(fsys, moved.outDir()); len(h) > 0 {
				t.Errorf("hidden files left: %v", h)
			}
			if _, err := fsys.Stat("/job"); err == nil {
				t.Errorf("the run in /job2 made /job")
			}
		})
		t.Run(fmt.Sprintf("copy/%d", i), func(t *testing.T) {
			fsys := cp.fs.CrashClone()
			copyTree(t, fsys, "/job", "/job2")
			original := tree(t, fsys, "/job")
			moved.fs = fsys
			moved.mustRun(t)
			moved.checkOutput(t, fsys)
			if h := hiddenFilesIn(fsys, moved.outDir()); len(h) > 0 {
				t.Errorf("hidden files left in the copy: %v", h)
			}
			now := tree(t, fsys, "/job")
			for _, p := range slices.Sorted(maps.Keys(original)) {
				if !bytes.Equal(now[p], original[p]) {
					t.Errorf("the copy's run changed %s of the original", p)
				}
			}
			if len(now) != len(original) {
				t.Errorf("the copy's run changed the original's files: %d, was %d", len(now), len(original))
			}
			// The original resumes as if there were no copy.
			o2 := *o
			o2.fs = fsys
			o2.mustRun(t)
			o2.checkOutput(t, fsys)
		})
	}
}
