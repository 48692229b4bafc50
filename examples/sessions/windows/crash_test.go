package windows_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/sessions"
	"github.com/pipegen/pipegen/examples/sessions/windows"
	"github.com/pipegen/pipegen/internal/crashtest"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
const defaultSeed = 20261204

// session is an open session of the model: its window [start, end) and
// its accumulator.
type session struct {
	start, end int64
	v          windows.Visit
	fired      bool
}

// expected computes the job's output without running it, from the
// documented semantics of session windows: the source's watermark is the
// highest event time so far minus the 2s bound minus 1ms, sent after
// every `every` clicks (64: the source reads at full speed, never without
// a click to read before the end, so it sends no other); a click's window [t, t+Gap) merges with the user's open
// sessions it overlaps or touches; a session fires when the watermark
// reaches its end minus 1ms, and is dropped Lateness later; a click whose
// merged session would be dropped already is late; a click added to a
// session that fired updates it (Late). The input's end fires the rest.
func expected(t *testing.T, every uint64) (out, late []string) {
	add := func(lines *[]string, v any) {
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		*lines = append(*lines, string(line))
	}
	gap, lateness := sessions.Gap.Milliseconds(), windows.Lateness.Milliseconds()
	open := map[string][]session{}
	result := func(user string, s *session, late bool) {
		add(&out, windows.Session{User: user, Start: s.start, End: s.end, Clicks: s.v.Clicks, First: s.v.First, Last: s.v.Last, Late: late})
	}
	advance := func(wm int64) {
		for user, ss := range open {
			ss = slices.DeleteFunc(ss, func(s session) bool {
				if !s.fired && s.end-1 <= wm {
					s.fired = true
					result(user, &s, false)
				}
				return s.end-1+lateness <= wm
			})
			for i := range ss {
				ss[i].fired = ss[i].end-1 <= wm
			}
			open[user] = ss
		}
	}
	maxTS, wm := int64(math.MinInt64), int64(math.MinInt64)
	for seq := uint64(0); ; seq++ {
		c, ok := windows.GenerateClick(seq)
		if !ok {
			break
		}
		ts := c.At.UnixMilli()
		ss := open[c.User]
		i := 0
		for i < len(ss) && ss[i].end < ts {
			i++
		}
		j := i
		m := session{start: ts, end: ts + gap}
		for j < len(ss) && ss[j].start <= ts+gap {
			m.start, m.end = min(m.start, ss[j].start), max(m.end, ss[j].end)
			j++
		}
		if m.end-1+lateness <= wm {
			add(&late, c)
		} else {
			if i < j && ss[i].start == m.start && ss[i].end == m.end {
				m.fired = ss[i].fired
			} else {
				m.fired = m.end-1 <= wm
			}
			for _, s := range ss[i:j] {
				windows.MergeVisits(&m.v, &s.v)
			}
			windows.AddClick(&m.v, c)
			if m.fired {
				result(c.User, &m, true)
			}
			open[c.User] = slices.Insert(slices.Delete(ss, i, j), i, m)
		}
		maxTS = max(maxTS, ts)
		if (seq+1)%every == 0 && maxTS-2000-1 > wm {
			wm = maxTS - 2000 - 1
			advance(wm)
		}
	}
	advance(math.MaxInt64)
	slices.Sort(out)
	slices.Sort(late)
	return out, late
}

// TestMain loads the package's Go code once and links each program once
// for all the tests (crashtest.Main).
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected checks that the independent answer is not a trivial one.
// (It would not be the answer with a rate: then the watermarks a waiting
// source sends move late clicks across the lateness, which the output
// with a watermark after every click shows.)
func TestExpected(t *testing.T) {
	out, late := expected(t, 64)
	updates := 0
	for _, l := range out {
		var s windows.Session
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		if s.Late {
			updates++
		}
	}
	if len(out) < 30_000 || len(late) < 500 || updates < 100 {
		t.Errorf("%d results, %d of them updates, %d late clicks: want many of each", len(out), updates, len(late))
	}
	if out1, late1 := expected(t, 1); slices.Equal(out, out1) && slices.Equal(late, late1) {
		t.Errorf("the output does not depend on when the source sends its watermarks: the workload misses late clicks near the lateness")
	}
	t.Logf("%d results, %d of them updates, %d late clicks", len(out), updates, len(late))
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on the
// state backends of crashtest.Backends, and checks that both runs commit
// exactly the expected output: the open sessions, those within their
// lateness and the late clicks survive the kills, exactly once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	// A clean run on the memory backend takes about 0.1 s: at a checkpoint
	// every 5 ms one restart in six resumed from a checkpoint (the kills
	// came before the first), at 1 ms four or five in six.
	interval := map[string]string{"pebble": "checkpoint.interval=5ms", "memory": "checkpoint.interval=1ms"}
	for _, backend := range crashtest.Backends("pebble", "memory") {
		t.Run(backend, func(t *testing.T) {
			out, late := expected(t, 64)
			crashtest.Run(t, backend, crashtest.Seed(t, defaultSeed), []string{interval[backend]}, map[string][]string{"out": out, "late": late})
		})
	}
	// At parallelism 1 the source calls the sessions' chain record by
	// record in its own goroutine (runtime.Inbox.Calls), not by batches:
	// the barriers still follow the records before them.
	t.Run("memory-parallelism-1", func(t *testing.T) {
		out, late := expected(t, 64)
		crashtest.Run(t, "memory", crashtest.Seed(t, defaultSeed), []string{"parallelism=1", interval["memory"]}, map[string][]string{"out": out, "late": late})
	})
}
