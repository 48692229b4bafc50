package runningcount_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/verify"
)

// The two versions of a keyed job in TestUpgrade, written into one Go
// package (same import path, as a real upgrade has) of a module of their
// own: version 2 adds a field to the state type (at the end), adds a
// stateless operator, and runs at parallelism 3 instead of 2. Their
// generators make 15,000 records a second per subtask: version 1's input
// lasts 2 s, so that the stop, 300 ms after the job started, comes in the
// middle of it on a loaded machine too (at 40,000 it lasted 0.75 s, and
// once the job was done before the stop).
const (
	upgradeV1YAML = `version: 1
name: upgrade
package: .
parallelism: 2
sources:
  - name: events
    connector: generator
    generate: Generate
    rate: 15000
operators:
  - name: items
    input: events
    map: Weigh
  - name: totals
    input: items
    key: ByKey
    aggregate:
      add: Add
      result: Running
    emit: update
sinks:
  - name: out
    input: totals
    connector: file
    path: out
    format: jsonl
`
	upgradeV2YAML = `version: 1
name: upgrade
package: .
parallelism: 3
sources:
  - name: events
    connector: generator
    generate: Generate
    rate: 15000
operators:
  - name: items
    input: events
    map: Weigh
  - name: checked
    input: items
    filter: Positive
  - name: totals
    input: checked
    key: ByKey
    aggregate:
      add: Add
      result: Running
    emit: update
sinks:
  - name: out
    input: totals
    connector: file
    path: out
    format: jsonl
`
	upgradeCommon = `package upgrade

import "fmt"

const Events = 60_000

const Keys = 97

type Event struct {
	Seq uint64
	Key int
}

type Item struct {
	Key    string
	Amount int64
}

type Line struct {
	Key   string ` + "`json:\"key\"`" + `
	Count int64  ` + "`json:\"count\"`" + `
	Sum   int64  ` + "`json:\"sum\"`" + `
}

func Generate(seq uint64) (Event, bool) {
	if seq >= Events {
		return Event{}, false
	}
	return Event{Seq: seq, Key: int(seq*7919%Keys)}, true
}

func Weigh(e Event) Item { return Item{Key: fmt.Sprintf("k%03d", e.Key), Amount: int64(e.Key%9 + 1)} }

func ByKey(it Item) string { return it.Key }

func Running(key string, t *Total) Line { return Line{Key: key, Count: t.Count, Sum: t.Sum} }
`
	upgradeV1Go = upgradeCommon + `
type Total struct {
	Count int64
	Sum   int64
}

func Add(t *Total, it Item) { t.Count++; t.Sum += it.Amount }
`
	upgradeV2Go = upgradeCommon + `
type Total struct {
	Count int64
	Sum   int64
	Max   int64 // new in version 2: zero in the state version 1 saved
}

func Add(t *Total, it Item) {
	t.Count++
	t.Sum += it.Amount
	t.Max = max(t.Max, it.Amount)
}

func Positive(it Item) bool { return it.Amount > 0 }
`
)

// upgradeExpected is the committed output of the job, computed without it:
// key k with n events has the lines count 1..n, sum count*(k%9+1).
func upgradeExpected() []string {
	const events, keys = 60_000, 97
	counts := make([]int64, keys)
	for seq := uint64(0); seq < events; seq++ {
		counts[seq*7919%keys]++
	}
	var lines []string
	for k, n := range counts {
		for c := int64(1); c <= n; c++ {
			lines = append(lines, fmt.Sprintf(`{"key":"k%03d","count":%d,"sum":%d}`, k, c, c*int64(k%9+1)))
		}
	}
	slices.Sort(lines)
	return lines
}

// buildVersion writes a version of the job into dir/job and builds it.
func buildVersion(t *testing.T, dir, yaml, code, bin string) {
	t.Helper()
	job := filepath.Join(dir, "job")
	if err := os.MkdirAll(job, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"pipeline.yaml": yaml, "job.go": code} {
		if err := os.WriteFile(filepath.Join(job, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compile.Generate(filepath.Join(job, "pipeline.yaml"), compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
}

// TestUpgrade: version 1 of a keyed job is stopped with a savepoint in the
// middle of its input; the savepoint is moved; version 2 (a field added to
// its state type, one stateless operator more, parallelism 3) starts from
// it and runs to the end. The committed output of both together is the
// independently computed one, each line once.
func TestUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two versions of a job in a module of their own")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/upgrade\n\ngo 1.26.0\n\nrequire github.com/pipegen/pipegen v0.0.0\n\nreplace github.com/pipegen/pipegen => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	v1, v2 := filepath.Join(dir, "v1"), filepath.Join(dir, "v2")
	buildVersion(t, dir, upgradeV1YAML, upgradeV1Go, v1)
	buildVersion(t, dir, upgradeV2YAML, upgradeV2Go, v2)

	out := filepath.Join(dir, "out")
	c1, c2 := filepath.Join(dir, "c1"), filepath.Join(dir, "c2")
	j1 := start(t, v1, "run", "--checkpoint-dir", c1, "--set", "sinks.out.path="+out, "--quiet")
	awaitControl(t, j1, c1)
	time.Sleep(300 * time.Millisecond)
	code, sp, stderr := command(t, v1, "stop", "--savepoint", "--checkpoint-dir", c1)
	if code != 0 {
		t.Fatalf("stop --savepoint: exit %d\n%s\njob:\n%s", code, stderr, j1.stderr.String())
	}
	if code := j1.wait(t); code != 0 {
		t.Fatalf("version 1 after stop --savepoint: exit %d\n%s", code, j1.stderr.String())
	}
	if got, err := verify.ReadCommitted(out); err != nil || len(got) == 0 || len(got) >= len(upgradeExpected()) {
		t.Fatalf("version 1 committed %d lines (%v): want it stopped in the middle", len(got), err)
	}
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(sp, moved); err != nil {
		t.Fatal(err)
	}

	j2 := start(t, v2, "run", "--from-savepoint", moved, "--checkpoint-dir", c2, "--set", "sinks.out.path="+out)
	if code := j2.wait(t); code != 0 {
		t.Fatalf("version 2: exit %d\n%s", code, j2.stderr.String())
	}
	log := j2.stderr.String()
	if !strings.Contains(log, "resuming from the savepoint of checkpoint") || !strings.Contains(log, "the job changed since checkpoint") {
		t.Errorf("version 2 does not say it resumed from the savepoint of another version:\n%s", log)
	}
	got, err := verify.ReadCommitted(out)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "output of version 1 and version 2 against the expected output", verify.CompareLines(upgradeExpected(), got, 5))
}
