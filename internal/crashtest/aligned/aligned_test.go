package aligned_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/internal/crashtest"
	"github.com/pipegen/pipegen/internal/crashtest/aligned"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
const defaultSeed = 20261206

// perFile is the number of readings of each input file, one every 10 ms
// of event time: 200 s of it.
const perFile = 20000

// input makes the readings of file f: file 1 starts a minute after file 0,
// so that its subtask waits at first, and the two then keep within the
// drift of each other.
func input(f int) []aligned.Reading {
	out := make([]aligned.Reading, perFile)
	start := int64(1_790_000_000_000) + int64(f)*60_000
	for i := range out {
		out[i] = aligned.Reading{Sensor: fmt.Sprintf("s%d", (i*7+f)%5), At: start + int64(i)*10, Value: int64(i*13+f) % 1000}
	}
	return out
}

// expected is the sink's committed lines, sorted, without running the
// job: the readings of both files summed per sensor and window of 10 s.
// No reading is late: each file is in order of time, and a subtask's
// records are judged by its own watermark.
func expected(files ...[]aligned.Reading) []string {
	type key struct {
		sensor string
		start  int64
	}
	sums := map[key]*aligned.Line{}
	for _, rs := range files {
		for _, r := range rs {
			k := key{r.Sensor, r.At - r.At%10_000}
			l := sums[k]
			if l == nil {
				l = &aligned.Line{Sensor: k.sensor, Start: k.start}
				sums[k] = l
			}
			l.N++
			l.Total += r.Value
		}
	}
	var lines []string
	for _, l := range sums {
		b, _ := json.Marshal(l)
		lines = append(lines, string(b))
	}
	slices.Sort(lines)
	return lines
}

// writeInputs writes the readings of both files into dir, as part-0.jsonl
// and part-1.jsonl, and returns them.
func writeInputs(t *testing.T, dir string) [][]aligned.Reading {
	t.Helper()
	var files [][]aligned.Reading
	for f := range 2 {
		rs := input(f)
		files = append(files, rs)
		var b strings.Builder
		for _, r := range rs {
			line, _ := json.Marshal(r)
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.jsonl", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestMain loads the package's Go code once and links each program once
// for all the tests (crashtest.Main).
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestCrash runs the job once without failures and once killed at random
// moments (package crashtest), and checks that both commit exactly the
// expected sums: a subtask that waits for the other passes the
// checkpoints' barriers on, and alignment loses or repeats nothing.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	dir := filepath.Join(t.TempDir(), "readings")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := writeInputs(t, dir)
	crashtest.Run(t, "memory", crashtest.Seed(t, defaultSeed), []string{"sources.readings.path=" + dir}, map[string][]string{"out": expected(files...)})
}

// TestCrashGroup is TestCrash for grouped.yaml: each file read by a source
// of its own at parallelism 1, the two sources kept within a second of
// each other by their timestamps.align-group.
func TestCrashGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	dir := t.TempDir()
	files := writeInputs(t, dir)
	sets := []string{"sources.first.path=" + filepath.Join(dir, "part-0.jsonl"), "sources.second.path=" + filepath.Join(dir, "part-1.jsonl")}
	crashtest.RunFile(t, "grouped.yaml", "memory", crashtest.Seed(t, defaultSeed), sets, nil, map[string][]string{"out": expected(files...)})
}
