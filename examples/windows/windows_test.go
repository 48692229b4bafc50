package windows_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/windows"
	"github.com/pipegen/pipegen/internal/crashtest"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/verify"
)

// expected computes the job's output from the documented semantics,
// without running it: source subtask i of 2 generates clicks i, i+2, ...;
// its watermark is the highest event time so far minus the 2s bound minus
// 1ms, looked at every 64 records; a click is late when its window's last
// millisecond is at or before its subtask's watermark; the others are
// counted per user and window of 10s.
func expected(parallelism int) (counts, late []string) {
	type key struct {
		user  string
		start int64
	}
	n := map[key]int64{}
	for sub := range parallelism {
		maxTS, wm, seen := int64(-1<<63), int64(-1<<63), 0
		for seq := uint64(sub); ; seq += uint64(parallelism) {
			c, ok := windows.NextClick(seq)
			if !ok {
				break
			}
			ts := c.At.UnixMilli()
			start := ts - ((ts%10000)+10000)%10000
			if start+10000-1 <= wm {
				line, _ := json.Marshal(c)
				late = append(late, string(line))
			} else {
				n[key{c.User, start}]++
			}
			maxTS = max(maxTS, ts)
			if seen++; seen%64 == 0 && maxTS-2000-1 > wm {
				wm = maxTS - 2000 - 1
			}
		}
	}
	for k, c := range n {
		line, _ := json.Marshal(windows.UserCount{User: k.user, Window: time.UnixMilli(k.start).UTC(), Clicks: c})
		counts = append(counts, string(line))
	}
	slices.Sort(counts)
	slices.Sort(late)
	return counts, late
}

func verifier(t testing.TB, backend string) *verify.Verifier {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	res, err := compile.Generate("pipeline.yaml", compile.Options{StateBackend: backend})
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier(res, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMain loads the example's package once and links each of its
// programs once for all the tests (crashtest.Main): TestWindows and TestStopDrain build
// the same program.
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestWindows runs the job cleanly and with SIGKILLs at random moments,
// and checks both against the independently computed windows and late
// clicks: disorder within the bound loses nothing, clicks beyond it go to
// the side output, and those alone. It runs on the state backends of
// crashtest.Backends (PIPEGEN_CRASH_BACKENDS=memory,pebble: on pebble
// the windows are in the subtasks' Pebble stores).
func TestWindows(t *testing.T) {
	for _, backend := range crashtest.Backends("memory") {
		t.Run(backend, func(t *testing.T) { testWindows(t, backend) })
	}
}

func testWindows(t *testing.T, backend string) {
	v := verifier(t, backend)
	wantCounts, wantLate := expected(2)
	if len(wantLate) != windows.Clicks/1000 {
		t.Fatalf("the model finds %d late clicks, the generator makes %d", len(wantLate), windows.Clicks/1000)
	}
	const seed = 20261129
	rep, err := v.Verify(verify.Options{Kills: 5, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical() {
		t.Errorf("the killed run's output differs from the clean run's (seed %d):\n%s", seed, rep)
	}
	if rep.Killed.Resumed == 0 {
		t.Errorf("no restarted process resumed from a checkpoint: recovery was not exercised")
	}
	for _, run := range []*verify.RunResult{rep.Clean, rep.Killed} {
		for sink, want := range map[string][]string{"out": wantCounts, "late": wantLate} {
			if d := verify.CompareLines(want, run.Output[sink], 3); !d.Equal() {
				t.Errorf("%s run, sink %s: %d lines missing (first %q), %d extra (first %q)", run.Name, sink, d.Missing, d.FirstMissing, d.Extra, d.FirstExtra)
			}
		}
	}
}

// BenchmarkTumblingWindows counts 10 million generated events per key in
// tumbling windows, at parallelism 1 and 2, against a hand-written Go loop
// doing the same count (a map from key and window to count), and reports
// events/s per core and the ratio:
//
//	go test ./examples/windows -run '^$' -bench TumblingWindows -benchtime 3x
func BenchmarkTumblingWindows(b *testing.B) {
	v := verifier(b, "memory")
	const events = 10_000_000
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("parallelism=%d", p), func(b *testing.B) {
			var gen, hand time.Duration
			for b.Loop() {
				start := time.Now()
				handCount(events)
				hand += time.Since(start)
				dir := b.TempDir()
				cmd := exec.Command(v.Binary, "run", "--quiet", fmt.Sprintf("--parallelism=%d", p),
					"--set", "sinks.out.path="+filepath.Join(dir, "out"), "--set", "sinks.late.path="+filepath.Join(dir, "late"),
					"--checkpoint-dir", filepath.Join(dir, "ckpt"))
				cmd.Env = append(os.Environ(), fmt.Sprintf("CLICKS=%d", events))
				start = time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				gen += time.Since(start)
			}
			n := float64(b.N) * events
			b.ReportMetric(n/gen.Seconds()/float64(p), "events/s/core")
			b.ReportMetric(n/hand.Seconds(), "hand-events/s")
			b.ReportMetric(hand.Seconds()/gen.Seconds(), "gen/hand")
		})
	}
}

// handCount is the hand-written loop: generate, extract the time, count
// per user and window.
func handCount(events int) map[[2]int64]int64 {
	counts := map[[2]int64]int64{}
	users := map[string]int64{}
	for seq := uint64(0); seq < uint64(events); seq++ {
		c, _ := windows.NextClickOf(seq, events)
		ts := c.At.UnixMilli()
		u, ok := users[c.User]
		if !ok {
			u = int64(len(users))
			users[c.User] = u
		}
		counts[[2]int64{u, ts - ((ts%10000)+10000)%10000}]++
	}
	return counts
}

// expectedEarly computes early.yaml's output from the documented
// semantics (docs/dsl.md, Triggers): the clicks that are not late are
// counted per user and window as for pipeline.yaml; a window with a
// count trigger of c in accumulate mode emits early after its c-th,
// 2c-th, ... click and then on time with its count; in discard mode it
// emits c for each early firing and on time what is left, if anything.
// The windows get all their clicks before they close (a click that is not
// late for its sender's watermark comes before the combined watermark
// closes its window), so which clicks are counted early varies from run
// to run, but not the counts.
func expectedEarly(parallelism int) (running, deltas []string) {
	counts, _ := expected(parallelism)
	line := func(c windows.UserCount, firing string, n int64) string {
		b, _ := json.Marshal(windows.FiringCount{User: c.User, Window: c.Window, Firing: firing, Clicks: n})
		return string(b)
	}
	for _, l := range counts {
		var c windows.UserCount
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			panic(err)
		}
		for n := int64(5); n <= c.Clicks; n += 5 {
			running = append(running, line(c, "early", n))
		}
		running = append(running, line(c, "on-time", c.Clicks))
		for n := int64(7); n <= c.Clicks; n += 7 {
			deltas = append(deltas, line(c, "early", 7))
		}
		if rest := c.Clicks % 7; rest > 0 {
			deltas = append(deltas, line(c, "on-time", rest))
		}
	}
	slices.Sort(running)
	slices.Sort(deltas)
	return running, deltas
}

// TestEarlyFirings runs early.yaml cleanly and with SIGKILLs at random
// moments, and checks both against the results computed from the
// documented semantics: early firings of windows are exactly-once too.
func TestEarlyFirings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	res, err := compile.Generate("early.yaml", compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier(res, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wantRunning, wantDeltas := expectedEarly(2)
	// A killed run that no restart resumed in (all kills after it had
	// finished, on a busy machine) is run again by verify itself.
	rep, err := v.Verify(verify.Options{Kills: 5, Seed: 20261201})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical() {
		t.Errorf("the killed run's output differs from the clean run's (seed %d):\n%s", rep.Seed, rep)
	}
	if rep.Killed.Resumed == 0 {
		t.Errorf("no restarted process resumed from a checkpoint: recovery was not exercised")
	}
	for _, run := range []*verify.RunResult{rep.Clean, rep.Killed} {
		for sink, want := range map[string][]string{"running-out": wantRunning, "deltas-out": wantDeltas} {
			if d := verify.CompareLines(want, run.Output[sink], 3); !d.Equal() {
				t.Errorf("%s run, sink %s: %d lines missing (first %q), %d extra (first %q)", run.Name, sink, d.Missing, d.FirstMissing, d.Extra, d.FirstExtra)
			}
		}
	}
}
