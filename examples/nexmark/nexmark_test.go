package nexmark_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/dsl"
	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/examples/nexmark/hand"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/internal/multicall"
)

// The tests run every query on 100,000 events at 1000 events per second
// of event time (100 seconds: windows of 10 s fire ten times) and compare
// the output with the reference.
var testConfig = nexmark.Config{Events: 100_000, Rate: 1000, Seed: 7}

func testEvents() []nexmark.Event {
	g := nexmark.NewGenerator(testConfig)
	events := make([]nexmark.Event, testConfig.Events)
	for i := range events {
		events[i] = g.Event(uint64(i))
	}
	return events
}

// programs is the one build of every query's program.
var programs struct {
	once  sync.Once
	dir   string // the binary, removed by TestMain
	built *multicall.Built
	err   error
}

// program returns the binary of the pipeline of file (queries/NAME.yaml).
func program(t testing.TB, file string) string {
	return build(t, file).path
}

type built struct {
	path string
	out  string // what the compiler printed: -gcflags=-m's escape analysis
}

// build builds every query's pipeline, from YAML and from JSON lines,
// once per test process, into one binary (internal/multicall: a link per
// program cost more than the rest of the build), with the compiler's
// escape analysis printed (-gcflags=-m, for TestRecordsStayOnStack), and
// returns that of file.
func build(t testing.TB, file string) built {
	programs.once.Do(func() {
		programs.dir, programs.err = os.MkdirTemp("", "nexmark-bin-*")
		if programs.err != nil {
			return
		}
		var progs []multicall.Program
		var moduleDir string
		for _, q := range nexmark.Queries {
			for _, name := range []string{q, q + "-jsonl"} {
				res, err := compile.Generate(filepath.Join("queries", name+".yaml"), compile.Options{})
				if err != nil {
					programs.err = err
					return
				}
				files := map[string][]byte{}
				for _, f := range res.Files {
					files[f.Name] = f.Content
				}
				progs = append(progs, multicall.Program{Name: name, Files: files})
				moduleDir = res.IR.ModuleDir
			}
		}
		programs.built, programs.err = multicall.Build(progs, multicall.Options{
			ModuleDir: moduleDir, ModulePath: "github.com/pipegen/pipegen", Dir: programs.dir, Gcflags: "-m"})
	})
	if programs.err != nil {
		t.Fatal(programs.err)
	}
	name := strings.TrimSuffix(filepath.Base(file), ".yaml")
	path, ok := programs.built.Paths[name]
	if !ok {
		t.Fatalf("%s: not one of the queries built", file)
	}
	return built{path: path, out: programs.built.Compiler[name]}
}

// runQuery runs a query's program and returns the lines it printed,
// sorted.
func runQuery(t *testing.T, bin string, cfg nexmark.Config, args ...string) []string {
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"run", "--quiet", "--checkpoint-dir", filepath.Join(dir, "checkpoints")}, args...)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("NEXMARK_EVENTS=%d", cfg.Events), fmt.Sprintf("NEXMARK_RATE=%d", cfg.Rate), fmt.Sprintf("NEXMARK_SEED=%d", cfg.Seed))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	slices.Sort(lines)
	return lines
}

// TestQueries runs every query's pipeline at parallelism 1, and at
// parallelism 2 with a checkpoint every 50ms, and compares both outputs
// with the reference's.
func TestQueries(t *testing.T) {
	events := testEvents()
	for _, q := range nexmark.Queries {
		t.Run(q, func(t *testing.T) {
			want, err := nexmark.Reference(q, events)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("the reference of %s has no output: the test would prove nothing", q)
			}
			bin := program(t, filepath.Join("queries", q+".yaml"))
			runs := [][]string{
				{"--parallelism=1"},
				{"--parallelism=2", "--set", "checkpoint.interval=50ms"},
			}
			if q == "q5" || q == "q7" {
				// q7's buckets combine the bids in each source subtask,
				// and q5's hottest the counts in each subtask of counts
				// (merge): at parallelism > 1 partials cross, not records.
				runs = append(runs, []string{"--parallelism=4", "--set", "checkpoint.interval=20ms"})
			}
			for _, args := range runs {
				got := runQuery(t, bin, testConfig, args...)
				compareLines(t, fmt.Sprintf("%s %v", q, args), got, want)
			}
		})
	}
}

// TestQueriesJSONL runs every query's pipeline over the same events read
// from JSON lines: at parallelism 1 from one file, at parallelism 2 from
// two (event n in file n%2, one per subtask), so that each subtask reads
// its events in order of time, and compares both outputs with the
// reference's.
func TestQueriesJSONL(t *testing.T) {
	events := testEvents()
	one, two := t.TempDir(), t.TempDir()
	var all []byte
	var files [2][]byte
	for i := range events {
		all = hand.AppendEvent(all, &events[i])
		files[i%2] = hand.AppendEvent(files[i%2], &events[i])
	}
	if err := os.WriteFile(filepath.Join(one, "events.jsonl"), all, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, data := range files {
		if err := os.WriteFile(filepath.Join(two, fmt.Sprintf("events-%d.jsonl", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range nexmark.Queries {
		t.Run(q, func(t *testing.T) {
			want, err := nexmark.Reference(q, events)
			if err != nil {
				t.Fatal(err)
			}
			bin := program(t, filepath.Join("queries", q+"-jsonl.yaml"))
			for p, dir := range map[int]string{1: one, 2: two} {
				got := runQuery(t, bin, testConfig, fmt.Sprintf("--parallelism=%d", p), "--set", "sources.events.path="+dir)
				compareLines(t, fmt.Sprintf("%s-jsonl at parallelism %d", q, p), got, want)
			}
		})
	}
}

// compareLines reports the first differences between two sorted outputs.
func compareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s: %d lines, the reference %d", what, len(got), len(want))
	shown := 0
	for i, j := 0, 0; (i < len(got) || j < len(want)) && shown < 5; {
		switch {
		case j == len(want) || i < len(got) && got[i] < want[j]:
			t.Errorf("  extra:   %s", got[i])
			i++
			shown++
		case i == len(got) || want[j] < got[i]:
			t.Errorf("  missing: %s", want[j])
			j++
			shown++
		default:
			i++
			j++
		}
	}
}

// TestMain removes the queries' binary (about 60 MB) after the
// tests: left in the temporary folder, every run would add to it. The
// sixteen query files are compiled against one package, which
// dsl.CachePackages loads once instead of once per file.
func TestMain(m *testing.M) {
	dsl.CachePackages()
	code := m.Run()
	if programs.dir != "" {
		os.RemoveAll(programs.dir)
	}
	os.Exit(code)
}

// TestMergeHot checks q5's combining: the counts of a window folded with
// AddHot in parts, merged with MergeHot, give the hottest auctions of all
// the counts folded at once. The counts are few and small, so that the
// highest is tied across parts, which the queries' runs need not meet.
func TestMergeHot(t *testing.T) {
	for seed := range uint64(200) {
		counts := make([]nexmark.AuctionCount, 1+seed%17)
		parts := int(1 + seed%4)
		for i := range counts {
			x := seed*31 + uint64(i)*7
			counts[i] = nexmark.AuctionCount{Auction: int64(1000 + i), Num: int64(1 + x%3)}
		}
		var whole nexmark.Hottest
		for _, c := range counts {
			nexmark.AddHot(&whole, c)
		}
		partial := make([]nexmark.Hottest, parts)
		for i, c := range counts {
			nexmark.AddHot(&partial[(i*5+int(seed))%parts], c)
		}
		var merged nexmark.Hottest
		for i := range partial {
			nexmark.MergeHot(&merged, &partial[i])
		}
		slices.Sort(whole.Auctions)
		slices.Sort(merged.Auctions)
		if merged.Num != whole.Num || !slices.Equal(merged.Auctions, whole.Auctions) {
			t.Fatalf("seed %d: merged %d %v, want %d %v (counts %v)", seed, merged.Num, merged.Auctions, whole.Num, whole.Auctions, counts)
		}
	}
}
