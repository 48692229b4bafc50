// Package crash kills Nexmark queries, mostly at parallelism 1, where
// their keyed operators run in the source's goroutine and take records by
// calls, and some at parallelism 2 (q4, q5, q7), where records cross in
// batches; it checks the committed output against the reference.
package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/internal/crashtest"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestMain loads the nexmark package once and links each program once for
// all the tests (crashtest.Main), as crashtest.RunFile does for its own:
// the rescale and savepoint tests build q7 and q5 as the crash tests do.
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestCrash builds q8 with a file sink (q8.yaml), runs it without
// failures, then again killing it with SIGKILL at random moments and
// restarting it each time, and checks that both runs commit exactly the
// reference's new users: the join's buffered people and sellers and the
// sellers' windows survive the kills, exactly once, on the path where the
// source calls the join record by record (Pair.Direct with one
// goroutine).
//
// Its windows' checkpoint stamps (runtime/internal/eventtime, stamps.go)
// move their base on every checkpoint (a span of 1), as they do every 128
// checkpoints in production: a process killed after a few checkpoints
// has rebased them, and stampSpan checks that several processes did.
func TestCrash(t *testing.T) {
	crashWith(t, "q8", nexmark.Config{Events: 100_000, Rate: 1000, Seed: 11}, 100, 5, nil, stampSpan(t, 1), "memory")
}

// stampSpan is the environment that sets the highest window stamp of the
// programs to span and has them log their rebases to a file
// (eventtime.SpanVar and RebaseLogVar, in a package this one cannot
// import). Once t and its subtests are done it checks that at least
// three processes rebased: the clean run's one and two of the killed
// run's, which are cut short (the output cannot tell whether a process
// rebased).
func stampSpan(t *testing.T, span int) []string {
	log := filepath.Join(t.TempDir(), "rebases")
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			return
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf("no process rebased its window stamps: %v", err)
		}
		pids := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			pid, _, ok := strings.Cut(line, " ")
			if !ok {
				t.Fatalf("rebase log line %q: want PID BASE", line)
			}
			pids[pid]++
		}
		if len(pids) < 3 {
			t.Errorf("%d processes rebased their window stamps (rebases by process id: %v), want 3 or more", len(pids), pids)
		}
		t.Logf("%d processes rebased their window stamps, %d times in all", len(pids), strings.Count(string(data), "\n"))
	})
	return []string{fmt.Sprint("PIPEGEN_TEST_STAMP_SPAN=", span), "PIPEGEN_TEST_STAMP_LOG=" + log}
}

// TestCrashQ4 does the same with q4 (q4.yaml) on both backends: the
// auctions' state and their timers (kept with the state, restored apart
// from it and found again through it) survive the kills, and every
// auction closes once.
func TestCrashQ4(t *testing.T) {
	crash(t, "q4", nexmark.Config{Events: 100_000, Rate: 1000, Seed: 12}, 3, 7, nil, "memory", "pebble")
}

// TestCrashQ4Parallel does the same with q4 at parallelism 2 on both
// backends: the bids and auctions cross to the closing subtasks in
// batches from two source subtasks, one a block of the generator's
// sequence ahead of the other, aligned at the barriers; a bid that comes
// before its auction waits in the state with a timer of its own, and the
// closing subtasks' timers fire at the slower source's watermark.
func TestCrashQ4Parallel(t *testing.T) {
	crash(t, "q4", nexmark.Config{Events: 100_000, Rate: 1000, Seed: 17}, 3, 11, []string{"parallelism=2"}, "memory", "pebble")
}

// TestCrashQ4InPace does what TestCrashQ4Parallel does with the source
// at full speed: without a rate the generator's subtasks keep pace
// (runtime/internal/connector/generator/pace.go), and one that is ahead
// returns no run while the other catches up, which the kills and the
// barriers must find it in too (a panic put in the wait fails this test:
// the subtasks do wait). 2M events make a clean run of about half a
// second, long enough for every restart to resume from a checkpoint.
// (The other crash tests pace their sources by a rate, which leaves the
// subtasks to the clock.)
func TestCrashQ4InPace(t *testing.T) {
	crash(t, "q4", nexmark.Config{Events: 2_000_000, Rate: 1000, Seed: 18}, 3, 19, []string{"parallelism=2", "sources.events.rate=0"}, "memory")
}

// TestCrashQ4FullSpeed kills q4 at parallelism 1 with its source at full
// speed, where the generator's chain makes its records in batches of 56
// and passes them on after (a rate makes a batch of one record): barriers
// fall between a record made and the same record passed on, and the
// position in each checkpoint must count only the records passed on.
func TestCrashQ4FullSpeed(t *testing.T) {
	crash(t, "q4", nexmark.Config{Events: 2_000_000, Rate: 1000, Seed: 20}, 3, 21, []string{"sources.events.rate=0"}, "memory")
}

// TestCrashBidCounts kills the count of bids per bucket and window
// (bidcounts.yaml: q7's path up to its buckets) at parallelism 1 and 2
// with its source at full speed, where the generator's chain passes the
// records of a batch on in its own loop (the filter IsBid and the emit
// methods written in) to the buckets' direct, which has the aggregate's
// code, and looks for a barrier after each batch. Every bid changes a
// count, so a bid lost or counted twice shows, which in q7's highest bids
// it seldom would: a scratch codegen whose barrier came before a batch
// was passed on, counting its records in the position, passed a kill
// test of q7 at parallelism 1 and fails this one at both. The counts are
// computed here, from the events.
func TestCrashBidCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	t.Parallel()
	config := nexmark.Config{Events: 2_000_000, Rate: 1000, Seed: 21}
	type window struct{ bucket, start int64 }
	counts := map[window]int64{}
	g := nexmark.NewGenerator(config)
	for i := range uint64(config.Events) {
		if e := g.Event(i); e.Type == nexmark.BidEvent {
			counts[window{e.Bid.Auction % 64, e.Bid.DateTime - e.Bid.DateTime%10_000}]++
		}
	}
	var want []string
	for w, n := range counts {
		want = append(want, fmt.Sprintf(`{"auction":%d,"num":%d}`, w.bucket, n))
	}
	if len(want) < 1000 {
		t.Fatalf("%d counts: the test would prove little", len(want))
	}
	slices.Sort(want)
	env := generatorEnv(config)
	// At parallelism 2 the loop's written-in code combines the bids per
	// bucket and window and sends partials, flushed before every barrier.
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("parallelism=", p), func(t *testing.T) {
			t.Parallel()
			crashtest.RunFile(t, "bidcounts.yaml", "memory", crashtest.Seed(t, 22+uint64(p)), []string{"sources.events.rate=0", fmt.Sprint("parallelism=", p)}, env, map[string][]string{"out": want})
		})
	}
}

// TestCrashQ5 does the same with q5 (q5.yaml): the sliding windows'
// counts, captured at the barriers and written as deltas by the
// checkpoint writer, survive the kills, and every window's hottest
// auctions are committed once. A checkpoint every 50 ms, so that a run
// killed after a few hundred milliseconds has taken deltas to resume
// from.
func TestCrashQ5(t *testing.T) {
	crash(t, "q5", nexmark.Config{Events: 100_000, Rate: 1000, Seed: 13}, 40, 9, []string{"checkpoint.interval=50ms"}, "memory")
}

// TestCrashQ5Parallel does the same with q5 at parallelism 2: two source
// subtasks, one of them a block of the generator's sequence ahead, send
// the bids to the counts' subtasks by batches, aligned at the barriers,
// and a subtask's slices take records whose sender's watermark is ahead
// of the state's (the fast path, aheadOf); each subtask of the counts
// combines its counts per window and sends hottest partials (merge:
// MergeHot), which no checkpoint holds: they are sent before every
// barrier. The generator's sources are
// in order, so no record here is late for some of its slice's windows:
// the windows kept whole for those are TestSlicedAsPerWindow's
// (runtime/internal/eventtime); with aheadOf always false this test
// still passes.
//
// Its windows' stamps move their base on every two checkpoints (a span of
// 3), as TestCrash's do.
func TestCrashQ5Parallel(t *testing.T) {
	crashWith(t, "q5", nexmark.Config{Events: 100_000, Rate: 1000, Seed: 16}, 40, 10, []string{"checkpoint.interval=50ms", "parallelism=2"}, stampSpan(t, 3), "memory")
}

// TestCrashQ7 does the same with q7 (q7.yaml) at parallelism 2, where the
// source subtasks send the buckets partial accumulators of the bids
// (merge) instead of the bids: they hold no state in a checkpoint, since
// they send every partial before they pass a barrier on, and the highest
// bids of every window are committed exactly once.
func TestCrashQ7(t *testing.T) {
	crash(t, "q7", nexmark.Config{Events: 100_000, Rate: 1000, Seed: 13}, 10, 9, nil, "memory")
}

// crash runs the crash test of query's pipeline file on the events of
// config (100 s of event time at 1000 events a second: ten windows of
// 10 s, auctions that close), generated at 40,000 a second so that a
// clean run lasts about 2.5 s and the kills land in it; the reference
// must have at least `least` lines, so that the test proves something;
// sets are more settings for the runs (`sources.events.rate=0` among them
// runs the source at full speed).
func crash(t *testing.T, query string, config nexmark.Config, least int, seed uint64, sets []string, backends ...string) {
	crashWith(t, query, config, least, seed, sets, nil, backends...)
}

// crashWith is crash with env (KEY=VALUE) added to the environment of the
// runs.
func crashWith(t *testing.T, query string, config nexmark.Config, least int, seed uint64, sets, env []string, backends ...string) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	// A run is paced (40,000 events a second) and waits most of its
	// time: the tests run in parallel, each with its generator's settings
	// in its runs' environment rather than in this process's.
	t.Parallel()
	want, genEnv := reference(t, query, config, least)
	env = append(genEnv, env...)
	for _, backend := range crashtest.Backends(backends...) {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			crashtest.RunFile(t, query+".yaml", backend, crashtest.Seed(t, seed), append([]string{"sources.events.rate=40000"}, sets...), env, map[string][]string{"out": want})
		})
	}
}

// reference is the reference's output of query on the events of config,
// sorted, which must have at least least lines for the test to prove
// something, and the environment that makes the query's programs
// generate the same events (generatorEnv).
func reference(t *testing.T, query string, config nexmark.Config, least int) (want, env []string) {
	t.Helper()
	g := nexmark.NewGenerator(config)
	events := make([]nexmark.Event, config.Events)
	for i := range events {
		events[i] = g.Event(uint64(i))
	}
	want, err := nexmark.Reference(query, events)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < least {
		t.Fatalf("the reference of %s has %d lines: the test would prove little", query, len(want))
	}
	slices.Sort(want)
	return want, generatorEnv(config)
}

// generatorEnv is the environment (KEY=VALUE) that makes the queries'
// programs generate the events of config.
func generatorEnv(config nexmark.Config) []string {
	return []string{
		fmt.Sprint("NEXMARK_EVENTS=", config.Events),
		fmt.Sprint("NEXMARK_RATE=", config.Rate),
		fmt.Sprint("NEXMARK_SEED=", config.Seed),
	}
}
