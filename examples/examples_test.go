package examples_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/dsl"
	"github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/ir"
)

// examples lists the example directories: every directory here but
// testdata, and every directory of theirs with a pipeline.yaml (an
// example's variant: sessions/windows).
func examples(t *testing.T) []string {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" {
			dirs = append(dirs, e.Name())
			subs, err := os.ReadDir(e.Name())
			if err != nil {
				t.Fatal(err)
			}
			for _, sub := range subs {
				if _, err := os.Stat(filepath.Join(e.Name(), sub.Name(), "pipeline.yaml")); sub.IsDir() && err == nil {
					dirs = append(dirs, filepath.Join(e.Name(), sub.Name()))
				}
			}
		}
	}
	if len(dirs) < 3 {
		t.Fatalf("found %d examples, want at least wordcount, runningcount and annotated", len(dirs))
	}
	return dirs
}

// yamlTwins are an example's pipeline files: pipeline.yaml, and the YAML
// twins of its annotated pipelines in testdata/.
func yamlTwins(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pipeline.yaml")); err == nil {
		files = append([]string{filepath.Join(dir, "pipeline.yaml")}, files...)
	}
	return files
}

// comparable returns p's IR as JSON without what differs between front
// ends: the file the pipeline came from and the positions of its nodes
// (the positions of functions and fields are the Go code's, the same for
// both).
func comparable(t *testing.T, p *ir.Pipeline) string {
	q := *p
	q.Source = ""
	q.Nodes = nil
	for _, n := range p.Nodes {
		m := *n
		m.Pos = ir.Pos{}
		q.Nodes = append(q.Nodes, &m)
	}
	b, err := compile.DumpIR(&q)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sourceLines are where generated code names the file its pipeline came
// from: the header's // source: line and the compiled Config.Source.
var sourceLines = regexp.MustCompile(`(?m)^(// source: .*|\tSource: +".*",)\n`)

// TestMain makes each example's package load once for all the compiles
// of it (dsl.CachePackages): TestTwins compiles every example from its
// directives and from each of its pipeline files, TestDriversUpToDate
// twice more, and the examples do not change while the tests run.
func TestMain(m *testing.M) {
	dsl.CachePackages()
	os.Exit(m.Run())
}

// TestTwins compiles every pipeline of every example from YAML and from
// the //pipegen: directives of its package, and checks that both give the
// same IR and the same generated code, as a main package and in package
// mode, but for where it names its source file.
func TestTwins(t *testing.T) {
	pipelines := 0
	for _, dir := range examples(t) {
		t.Run(dir, func(t *testing.T) {
			annotated, err := compile.CheckPackage(dir)
			if err != nil {
				t.Fatalf("the //pipegen: directives of %s: %v", dir, err)
			}
			byName := map[string]*ir.Pipeline{}
			for _, p := range annotated {
				byName[p.Name] = p
			}
			twins := yamlTwins(t, dir)
			if len(twins) != len(annotated) {
				t.Errorf("%s has %d YAML pipelines and %d annotated ones: every pipeline needs its twin", dir, len(twins), len(annotated))
			}
			for _, file := range twins {
				fromYAML, err := compile.Check(file)
				if err != nil {
					t.Errorf("%s: %v", file, err)
					continue
				}
				fromGo, ok := byName[fromYAML.Name]
				if !ok {
					t.Errorf("%s: pipeline %s has no annotated twin in %s", file, fromYAML.Name, dir)
					continue
				}
				pipelines++
				if d := goldenfile.Diff(comparable(t, fromYAML), comparable(t, fromGo)); d != "" {
					t.Errorf("pipeline %s: the IR from %s (-) and from the directives (+) differ:\n%s", fromYAML.Name, file, d)
					continue
				}
				for _, opts := range []codegen.Options{{}, {Package: true, Cmd: true}} {
					a, errA := codegen.Generate(fromYAML, opts)
					b, errB := codegen.Generate(fromGo, opts)
					if (errA == nil) != (errB == nil) {
						t.Fatalf("pipeline %s: generating from YAML: %v; from the directives: %v", fromYAML.Name, errA, errB)
					}
					if errA != nil {
						// Not generated yet (both say so, each at its own position).
						t.Logf("pipeline %s: %v", fromYAML.Name, errA)
						continue
					}
					if len(a) != len(b) {
						t.Fatalf("pipeline %s: %d files from YAML, %d from the directives", fromYAML.Name, len(a), len(b))
					}
					for i := range a {
						ya, yb := sourceLines.ReplaceAll(a[i].Content, nil), sourceLines.ReplaceAll(b[i].Content, nil)
						if a[i].Name != b[i].Name || !bytes.Equal(ya, yb) {
							t.Errorf("pipeline %s, %s: the code generated from YAML (-) and from the directives (+) differ:\n%s",
								fromYAML.Name, a[i].Name, goldenfile.Diff(string(ya), string(yb)))
						}
					}
				}
			}
		})
	}
	if pipelines < 4 {
		t.Errorf("compared %d pipelines, want at least 4 (wordcount, runningcount, and both of annotated)", pipelines)
	}
}

// TestAnnotatedUpToDate runs `go generate ./...` over a copy of
// examples/annotated and fails when that changes any file: the committed
// generated code must be what the compiler generates. It then builds and
// runs both of the example's commands.
func TestAnnotatedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("go generate builds pipegen and the example's programs")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "annotated")
	if err := os.CopyFS(work, os.DirFS("annotated")); err != nil {
		t.Fatal(err)
	}
	// The copy's replace directive points at this checkout.
	gomod := filepath.Join(work, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	replaced := strings.Replace(string(data), "=> ../..", "=> "+root, 1)
	if replaced == string(data) {
		t.Fatal("examples/annotated/go.mod has no `replace github.com/pipegen/pipegen => ../..`")
	}
	if err := os.WriteFile(gomod, []byte(replaced), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, work)
	goCmd(t, work, "generate", "./...")
	after := tree(t, work)
	var stale []string
	for name, content := range after {
		if name == "go.mod" {
			continue
		}
		if old, ok := before[name]; !ok {
			stale = append(stale, name+" (new)")
		} else if old != content {
			stale = append(stale, name+" (changed):\n"+goldenfile.Diff(old, content))
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			stale = append(stale, name+" (removed)")
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("go generate ./... in examples/annotated changes %s", s)
	}
	if len(stale) > 0 {
		t.Log("run go generate ./... in examples/annotated and commit the result")
	}

	goCmd(t, work, "vet", "./...")
	bin := t.TempDir()
	goCmd(t, work, "build", "-o", bin, "./cmd/...")

	// pageviews on the sample log.
	run := t.TempDir()
	sample, err := os.ReadFile(filepath.Join(work, "testdata", "views.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "views.jsonl"), sample, 0o644); err != nil {
		t.Fatal(err)
	}
	runProgram(t, run, filepath.Join(bin, "pageviews"), "run", "--quiet")
	got := lines(t, filepath.Join(run, "out"))
	want := []string{
		`{"path":"/","views":2,"avg_millis":1000}`,
		`{"path":"/docs","views":2,"avg_millis":4800}`,
		`{"path":"/pricing","views":2,"avg_millis":4200}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("pageviews wrote\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// busiest prints every user's longest view.
	out := runProgram(t, run, filepath.Join(bin, "busiest"), "run", "--quiet", "--checkpoint-dir", filepath.Join(run, "busiest-checkpoints"))
	got = strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(got)
	want = []string{"user0 /page/5 9959ms", "user1 /page/6 9988ms", "user2 /page/2 9969ms", "user3 /page/3 9998ms", "user4 /page/9 9979ms"}
	if !slices.Equal(got, want) {
		t.Errorf("busiest printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// tree reads every file under dir, by slash-separated relative name.
func tree(t *testing.T, dir string) map[string]string {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

func runProgram(t *testing.T, dir, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// lines returns the sorted lines of the files of a sink directory whose
// names do not start with '.'.
func lines(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDriversUpToDate: the test drivers that examples/sessions, fraud,
// cardblock and merchants commit (go generate in each: generate -test from
// pipeline.yaml into NAMEtest, and from the directives into
// NAME_pipegen_test.go) are what the compiler generates now.
func TestDriversUpToDate(t *testing.T) {
	for _, name := range []string{"sessions", "fraud", "cardblock", "merchants"} {
		t.Run(name, func(t *testing.T) {
			res, err := compile.Generate(filepath.Join(name, "pipeline.yaml"), compile.Options{Version: "(devel)",
				Command: "pipegen generate -o " + name + "test -test pipeline.yaml", Test: true, TestPackage: name + "test"})
			if err != nil {
				t.Fatal(err)
			}
			changes, err := res.Stale(filepath.Join(name, name+"test"))
			if err != nil {
				t.Fatal(err)
			}
			pk, err := compile.GeneratePackage(name, compile.PackageOptions{Options: compile.Options{Version: "(devel)", Command: "pipegen generate -test", Test: true}})
			if err != nil {
				t.Fatal(err)
			}
			more, err := pk.Plan()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range append(changes, more...) {
				t.Errorf("%s: %s is not what pipegen generate -test writes: run go generate in examples/%s", name, c.Path, name)
			}
		})
	}
}
