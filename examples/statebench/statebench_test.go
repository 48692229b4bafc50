package statebench_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	_ "github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/internal/peakrss"
)

// BenchmarkState runs the state benchmark's job (pipeline.yaml) on both
// state backends with 10K, 1M and 10M keys (STATEBENCH_SIZES=10000,1000000
// picks others), each first with checkpoint.mode none and then with
// exactly-once checkpoints every second, the same program on the same
// input (three such pairs up to 1M keys, one at 10M), then resumes it from
// its newest checkpoint. It reports, per size and backend:
//
//	written-%   bytes a checkpoint writes, as a share of the state's files
//	            (median of the checkpoints taken after the fill)
//	ckpt-ms     checkpoint duration, trigger to manifest (median after the fill)
//	stall-ms    the longest time a subtask stopped processing at a barrier
//	            (over every checkpoint, the fill's included)
//	eo/none     throughput with exactly-once at 1s over mode none (median of the pairs)
//	rss-MiB     peak RSS with exactly-once (rss-none-MiB: mode none)
//	restore-ms  the restore of the newest checkpoint; restore-s/GB per GB of its files
//
//	make bench-state   (or: go test ./examples/statebench -run '^$' -bench State -benchtime 1x -timeout 120m)
func BenchmarkState(b *testing.B) {
	sizes := []uint64{10_000, 1_000_000, 10_000_000}
	if s := os.Getenv("STATEBENCH_SIZES"); s != "" {
		sizes = nil
		for f := range strings.SplitSeq(s, ",") {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				b.Fatalf("STATEBENCH_SIZES=%s: %v", s, err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, keys := range sizes {
		for _, backend := range []string{"memory", "pebble"} {
			b.Run(fmt.Sprintf("keys=%s/%s", count(keys), backend), func(b *testing.B) {
				bin := program(b, backend)
				for b.Loop() {
					// Three pairs of runs up to 1M keys, one at 10M.
					pairs := 3
					if keys >= 10_000_000 {
						pairs = 1
					}
					r := measure(b, bin, keys, updates, "", pairs, true)
					r.report(b)
				}
			})
		}
	}
}

// updates is the number of events after the fill: they update keys the
// cache holds, about 10 s of them on either backend on a 2-core machine,
// for about ten checkpoints after the fill.
const updates = 300_000_000

// BenchmarkStateMemLimit runs the job with 10M keys (STATEBENCH_SIZES's
// last, if set) and GOMEMLIMIT at a quarter of the state's size on pebble
// (the store's files), on both backends, and reports each one's peak RSS
// and run time. Both complete (GOMEMLIMIT is a soft limit). The pebble
// stores are sized from GOMEMLIMIT (runtime/pebblestate/budget.go): at 3M
// keys (77 MiB of sstables, GOMEMLIMIT 19 MiB) pebble peaked at 52 MiB
// against memory's 465 MiB, and took 6 times as long (docs/checkpoints.md,
// The state table).
func BenchmarkStateMemLimit(b *testing.B) {
	keys := uint64(10_000_000)
	if s := os.Getenv("STATEBENCH_SIZES"); s != "" {
		f := strings.Split(s, ",")
		keys, _ = strconv.ParseUint(f[len(f)-1], 10, 64)
	}
	// The state's size on pebble, to set the limit from (a run of its
	// own, unless STATEBENCH_STATE_MIB says it).
	var limit int64
	if mib, err := strconv.ParseInt(os.Getenv("STATEBENCH_STATE_MIB"), 10, 64); err == nil {
		limit = mib << 20 / 4
	} else {
		b.Run("size", func(b *testing.B) {
			for b.Loop() {
				r := measure(b, program(b, "pebble"), keys, 1_000_000, "", 1, false)
				limit = r.state / 4
				b.ReportMetric(float64(r.state)/(1<<20), "state-MiB")
			}
		})
	}
	for _, backend := range []string{"pebble", "memory"} {
		b.Run(fmt.Sprintf("keys=%s/%s", count(keys), backend), func(b *testing.B) {
			for b.Loop() {
				r := measure(b, program(b, backend), keys, 1_000_000, fmt.Sprintf("GOMEMLIMIT=%dMiB", limit>>20), 1, false)
				b.ReportMetric(float64(limit>>20), "GOMEMLIMIT-MiB")
				b.ReportMetric(float64(r.state)/(1<<20), "state-MiB")
				b.ReportMetric(float64(r.rssEO)/(1<<20), "rss-MiB")
				b.ReportMetric(r.eo.Seconds(), "run-s")
				b.ReportMetric(float64(r.rssNone)/(1<<20), "rss-none-MiB")
				b.ReportMetric(r.none.Seconds(), "run-none-s")
			}
		})
	}
}

var (
	programsMu sync.Mutex
	programs   = map[string]string{}
	// programDirs are the programs' folders, removed by TestMain.
	programDirs []string
)

// program builds the job with its state on backend, once.
func program(b *testing.B, backend string) string {
	programsMu.Lock()
	defer programsMu.Unlock()
	if bin := programs[backend]; bin != "" {
		return bin
	}
	dir, err := os.MkdirTemp("", "statebench-bin-*")
	if err != nil {
		b.Fatal(err)
	}
	res, err := compile.Generate("pipeline.yaml", compile.Options{StateBackend: backend})
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "statebench-"+backend)
	if err := res.Build(bin); err != nil {
		b.Fatal(err)
	}
	programs[backend] = bin
	programDirs = append(programDirs, dir)
	return bin
}

// result is what one measurement found.
type result struct {
	none, eo       time.Duration // the last runs' wall times
	ratio          float64       // the median of the pairs' none/exactly-once
	rssNone, rssEO int64         // their peak RSS
	written        float64       // median share written per checkpoint after the fill
	ckpt           time.Duration // median checkpoint duration after the fill
	stall          time.Duration // longest stall at a barrier
	steady         int           // checkpoints after the fill
	state          int64         // the files of the newest checkpoint
	restore        time.Duration
}

func (r *result) report(b *testing.B) {
	b.ReportMetric(r.written, "written-%")
	b.ReportMetric(float64(r.ckpt.Microseconds())/1000, "ckpt-ms")
	b.ReportMetric(float64(r.stall.Microseconds())/1000, "stall-ms")
	b.ReportMetric(r.ratio, "eo/none")
	b.ReportMetric(float64(r.rssEO)/(1<<20), "rss-MiB")
	b.ReportMetric(float64(r.rssNone)/(1<<20), "rss-none-MiB")
	b.ReportMetric(float64(r.restore.Microseconds())/1000, "restore-ms")
	if r.state > 0 {
		b.ReportMetric(r.restore.Seconds()/(float64(r.state)/1e9), "restore-s/GB")
	}
	b.ReportMetric(float64(r.state)/(1<<20), "state-MiB")
	b.ReportMetric(float64(r.steady), "steady-ckpts")
}

// measure runs the job over keys keys and then updates events, in mode
// none and with exactly-once checkpoints every second (pairs times,
// one after the other), then, with restore, resumes it from its newest
// checkpoint; env is added to the programs' environment.
func measure(b *testing.B, bin string, keys, updates uint64, env string, pairs int, restore bool) *result {
	dir := b.TempDir()
	environ := append(os.Environ(), fmt.Sprintf("STATEBENCH_KEYS=%d", keys), fmt.Sprintf("STATEBENCH_UPDATES=%d", updates))
	if env != "" {
		environ = append(environ, env)
	}
	r := &result{}
	var fill int64
	// The runs in pairs, none then exactly-once, and the median of the
	// pairs' ratios: the machine's speed drifts between runs.
	var ratios []float64
	for pair := range pairs {
		for _, mode := range []string{"none", "exactly-once"} {
			work := filepath.Join(dir, mode)
			os.RemoveAll(work)
			os.MkdirAll(work, 0o755)
			out, wall, rss := run(b, work, environ, bin, "run", "--quiet", "--set", "checkpoint.mode="+mode, "--set", "checkpoint.interval=1s",
				"--set", "checkpoint.retain=100000", "--checkpoint-dir", "ckpt")
			if mode == "none" {
				r.none, r.rssNone = wall, max(r.rssNone, rss)
				continue
			}
			r.eo, r.rssEO = wall, max(r.rssEO, rss)
			ratios = append(ratios, r.none.Seconds()/r.eo.Seconds())
			if pair == pairs-1 {
				for _, m := range regexp.MustCompile(`fill done at (\d+)`).FindAllStringSubmatch(out, -1) {
					t, _ := strconv.ParseInt(m[1], 10, 64)
					fill = max(fill, t)
				}
			}
		}
	}
	slices.Sort(ratios)
	r.ratio = ratios[len(ratios)/2]
	ms := manifests(b, filepath.Join(dir, "exactly-once", "ckpt"))
	var written []float64
	var durations []time.Duration
	var newest *manifest
	for _, m := range ms {
		r.stall = max(r.stall, m.Stats.Stall)
		if m.Final {
			continue
		}
		newest = m
		if m.Time.Add(-m.Stats.Duration).UnixNano() < fill || m.Stats.StateSize == 0 {
			continue // taken during the fill
		}
		written = append(written, 100*float64(m.Stats.BytesWritten)/float64(m.Stats.StateSize))
		durations = append(durations, m.Stats.Duration)
	}
	r.steady = len(written)
	if len(written) > 0 {
		slices.Sort(written)
		slices.Sort(durations)
		r.written, r.ckpt = written[len(written)/2], durations[len(durations)/2]
	}
	if newest == nil {
		b.Logf("no checkpoint but the final one: nothing to restore")
		return r
	}
	r.state = newest.Stats.StateSize
	if !restore {
		return r
	}
	work := filepath.Join(dir, "restore")
	os.MkdirAll(work, 0o755)
	out, _, _ := run(b, work, environ, bin, "run", "--from-checkpoint", filepath.Join(dir, "exactly-once", "ckpt", fmt.Sprintf("chk-%06d", newest.ID)),
		"--checkpoint-dir", "ckpt")
	m := regexp.MustCompile(`state of checkpoint \d+ restored in (\S+)`).FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("the resumed run does not say how long its restore took:\n%s", out)
	}
	r.restore, _ = time.ParseDuration(m[1])
	return r
}

// run runs the program in dir and returns its standard error, its wall
// time and its peak RSS (its own: see peakrss).
func run(b *testing.B, dir string, env []string, bin string, args ...string) (string, time.Duration, int64) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	peak := peakrss.Watch(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	wall := time.Since(start)
	rss, err := peak()
	if err != nil {
		b.Fatal(err)
	}
	return stderr.String(), wall, rss
}

// manifest is what the benchmark reads of a checkpoint's MANIFEST.
type manifest struct {
	ID    int64     `json:"id"`
	Time  time.Time `json:"time"`
	Final bool      `json:"final"`
	Stats struct {
		Duration     time.Duration `json:"duration"`
		Stall        time.Duration `json:"stall"`
		BytesWritten int64         `json:"bytesWritten"`
		StateSize    int64         `json:"stateSize"`
	} `json:"stats"`
}

// manifests reads the manifests of the checkpoint directory dir, oldest
// first.
func manifests(b *testing.B, dir string) []*manifest {
	folders, err := filepath.Glob(filepath.Join(dir, "chk-*", "MANIFEST"))
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(folders)
	var out []*manifest
	for _, f := range folders {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		// The JSON, without the checksum line after it.
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, len(data)+1)
		var js []byte
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "crc32c ") {
				break
			}
			js = append(js, sc.Bytes()...)
		}
		m := new(manifest)
		if err := json.Unmarshal(js, m); err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		out = append(out, m)
	}
	return out
}

// count prints a number of keys as 10K, 1M, 10M.
func count(n uint64) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dK", n/1000)
	}
	return fmt.Sprint(n)
}

// TestMain removes the built programs after the benchmarks.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range programDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
