package golden

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/goldenfile"
)

func cases(t *testing.T) []string {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" {
			if _, err := os.Stat(filepath.Join(e.Name(), "pipeline.yaml")); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found %d golden cases, want at least 10", len(names))
	}
	return names
}

func init() {
	// Warnings are compared with want/stderr.txt, not printed.
	compile.Stderr = io.Discard
}

// version is the version of pipegen the goldens record: fixed, so that
// they stay the same from one release to the next.
const version = "(devel)"

func TestGolden(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := filepath.Join(name, "want")
			got := map[string][]byte{}
			res, err := compile.Generate(filepath.Join(name, "pipeline.yaml"), compile.Options{Version: version, Command: "pipegen generate -o want pipeline.yaml"})
			if err != nil {
				l, ok := compile.IsDiagnostics(err)
				if !ok {
					t.Fatalf("compiler failed without diagnostics: %v", err)
				}
				got["stderr.txt"] = []byte(l.Format(wd))
			} else {
				for _, f := range res.Files {
					got[f.Name] = f.Content
				}
				if res.Warnings.Len() > 0 {
					// Warnings stop nothing; stderr.txt pins them.
					got["stderr.txt"] = []byte(res.Warnings.Format(wd))
				}
			}
			// output.txt is the run's, and *_test.go files are written by
			// hand: tests of the generated code, next to it.
			compareDir(t, want, got, func(name string) bool {
				return name != "output.txt" && !strings.HasSuffix(name, "_test.go")
			})
			if _, err := os.Stat(filepath.Join(name, "run.txt")); err == nil && res != nil {
				runCase(t, name)
			}
			// A case with a folder jobtest has the pipeline generated for
			// the test driver there too (generate -test), and tests of it.
			if _, err := os.Stat(filepath.Join(name, "jobtest")); err == nil {
				res, err := compile.Generate(filepath.Join(name, "pipeline.yaml"), compile.Options{Version: version, Command: "pipegen generate -test -o jobtest pipeline.yaml",
					Test: true, TestPackage: "jobtest"})
				if err != nil {
					t.Fatalf("generate -test: %v", err)
				}
				got := map[string][]byte{}
				for _, f := range res.Files {
					got[f.Name] = f.Content
				}
				compareDir(t, filepath.Join(name, "jobtest"), got, func(name string) bool { return !strings.HasSuffix(name, "_test.go") })
			}
		})
	}
}

// compareDir checks that dir holds exactly the files of got (among those
// that owned selects), or rewrites it with -update.
func compareDir(t *testing.T, dir string, got map[string][]byte, owned func(string) bool) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := got[e.Name()]; ok || !owned(e.Name()) {
			continue
		}
		if *goldenfile.Update {
			os.Remove(filepath.Join(dir, e.Name()))
		} else {
			t.Errorf("%s: the compiler no longer produces this file (run go test ./golden -update)", filepath.Join(dir, e.Name()))
		}
	}
	for _, name := range slices.Sorted(mapKeys(got)) {
		goldenfile.Check(t, filepath.Join(dir, name), got[name])
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// runCase builds the case's golden program (want/ is a main package) and
// runs it on the case's input.
func runCase(t *testing.T, name string) {
	if testing.Short() {
		t.Skip("running goldens is skipped in -short mode")
	}
	runProgram(t, name, program(t, wantKey(name), "./"+filepath.Join(name, "want")))
}

// runProgram runs the case's program bin on the case's input (the files
// of input/) with the arguments of run.txt, and compares what it printed
// and the files it wrote with want/output.txt.
func runProgram(t *testing.T, name, bin string) {
	got := programOutput(t, name, bin)
	compareDir(t, filepath.Join(name, "want"), map[string][]byte{"output.txt": got}, func(n string) bool { return n == "output.txt" })
}

// TestGoldenOtherBackend builds every golden program that runs with the
// other state backend (pebble for those on memory, memory for those on
// pebble) and checks that it prints and writes exactly what want/output.txt
// says: the same pipeline gives the same output on either backend.
func TestGoldenOtherBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("running goldens is skipped in -short mode")
	}
	for _, name := range cases(t) {
		if _, err := os.Stat(filepath.Join(name, "run.txt")); err != nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := generateOther(name)
			if err != nil {
				t.Fatal(err)
			}
			if res == nil {
				t.Skip("no keyed state: the backend holds nothing of this pipeline")
			}
			other := res.IR.StateBackend
			bin := builtProgram(t, otherKey(name))
			if bin == "" {
				bin = filepath.Join(t.TempDir(), "prog")
				if err := res.Build(bin); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(filepath.Join(name, "want", "output.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if got := programOutput(t, name, bin); !bytes.Equal(got, want) {
				t.Errorf("on %s the program's output differs from want/output.txt:\n%s", other, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff lists the lines only one of want and got has.
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var out []string
	for l, n := range count {
		switch {
		case n > 0:
			out = append(out, "-"+l)
		case n < 0:
			out = append(out, "+"+l)
		}
	}
	slices.Sort(out)
	if len(out) > 20 {
		out = append(out[:20], "...")
	}
	return strings.Join(out, "\n")
}

// programOutput runs the case's program bin on the case's input (the
// files of input/) with the arguments of run.txt, and returns what it
// printed and the files it wrote, one sorted line each.
func programOutput(t *testing.T, name, bin string) []byte {
	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	if err := os.CopyFS(work, os.DirFS(filepath.Join(name, "input"))); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.MkdirAll(work, 0o755)
	argsData, err := os.ReadFile(filepath.Join(name, "run.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(strings.TrimSpace(string(argsData)), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			args = append(args, line)
		}
	}
	// Checkpoints go elsewhere: the output is what the sinks committed.
	args = append(args, "--checkpoint-dir", filepath.Join(tmp, "checkpoints"))
	before := listFiles(t, work)
	cmd := exec.Command(bin, args...)
	cmd.Dir = work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if l != "" {
			lines = append(lines, "stdout: "+l)
		}
	}
	for _, f := range listFiles(t, work) {
		if slices.Contains(before, f) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(work, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				lines = append(lines, filepath.ToSlash(filepath.Dir(f))+": "+l)
			}
		}
	}
	slices.Sort(lines)
	return []byte(strings.Join(lines, "\n") + "\n")
}

// listFiles lists the regular files under dir whose names do not start
// with '.', relative to dir.
func listFiles(t *testing.T, dir string) []string {
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
		return nil
	})
	return files
}
