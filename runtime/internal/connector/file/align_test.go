package file

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
)

// alignedSubtask is a subtask of a file source of lines that are event
// times in milliseconds, with its watermarks (no out-of-orderness) and
// the times it read.
type alignedSubtask struct {
	src  *Source[string]
	wm   *eventtime.Watermarks // the generated code's watermark generator
	read []int64
}

// readUntilHeld reads the subtask as its generated loop would, until Next
// returns nothing while the source is not done (the subtask is held), or
// to the end. It reports whether it was held.
func (s *alignedSubtask) readUntilHeld(t *testing.T) bool {
	t.Helper()
	for {
		line, ok := s.src.Next()
		if !ok {
			return !s.src.Done()
		}
		ts, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		s.read = append(s.read, ts)
		s.wm.Observe(ts)
	}
}

// alignedSource writes one file per subtask, subtask i's holding the
// times of times[i] one per line, and opens both subtasks of a source
// with a maximum drift (0 for none) in env (shared or not).
func alignedSource(t *testing.T, drift time.Duration, shared bool, times ...[]int64) []*alignedSubtask {
	dir := t.TempDir()
	for i, ts := range times {
		var b strings.Builder
		for _, v := range ts {
			fmt.Fprintln(&b, v)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("in-%d.txt", i)), b.String())
	}
	n := connectortest.SourceNode("src", "file", map[string]string{"path": dir})
	n.Watermark = config.WatermarkConfig{MaxDrift: drift}
	var env connector.Env = connectortest.New(t, len(times), n)
	if shared {
		env = &connectortest.SharedEnv{Env: env.(*connectortest.Env)}
	}
	subs := make([]*alignedSubtask, len(times))
	for i := range subs {
		s := &alignedSubtask{src: NewSource(env, 0, i, format.LinesFormat()), wm: eventtime.NewWatermarks(n.Watermark)}
		s.src.Align(0, s.wm)
		subs[i] = s
	}
	return subs
}

// span is the times from lo to hi-1, a millisecond apart.
func span(lo, hi int64) []int64 {
	var ts []int64
	for v := lo; v < hi; v++ {
		ts = append(ts, v)
	}
	return ts
}

// TestFileSourceAlignment reads two subtasks of a file source with
// timestamps.max-drift 100ms in turn: one stops reading (Next returns
// nothing, not done) once its watermark is more than the drift ahead of
// the other's, and before the other has a watermark; it goes on as the
// other catches up, and reads to its end once the other has ended (its
// input is shorter). Every record is read once.
func TestFileSourceAlignment(t *testing.T) {
	const drift = 100
	subs := alignedSource(t, drift*time.Millisecond, true, span(0, 1000), span(0, 3000))
	s0, s1 := subs[0], subs[1]
	// Alone, subtask 1 stops at its first watermark: subtask 0 has none.
	if !s1.readUntilHeld(t) || len(s1.read) > 2*64 {
		t.Fatalf("subtask 1 read %d records with subtask 0 not started: want it held at its first watermark", len(s1.read))
	}
	ahead := func(a, b *alignedSubtask) int64 { return a.read[len(a.read)-1] - b.read[len(b.read)-1] }
	// Watermarks come every 64 records, a record a millisecond here: the
	// one held has read at most that much past the drift.
	held := func(a, b *alignedSubtask, name string) {
		if d := ahead(a, b); d <= drift || d > drift+2*64 {
			t.Fatalf("%s stopped %d ms ahead of the other: want just over the drift, %d ms", name, d, drift)
		}
	}
	turns := 0
	for ; !s0.src.Done(); turns++ {
		if turns > 100 {
			t.Fatalf("subtask 0 not done after %d turns: %d and %d records read", turns, len(s0.read), len(s1.read))
		}
		if s0.readUntilHeld(t) {
			held(s0, s1, "subtask 0")
		}
		if !s0.src.Done() {
			if !s1.readUntilHeld(t) {
				t.Fatalf("subtask 1 read to its end with subtask 0 at %d ms", s0.read[len(s0.read)-1])
			}
			held(s1, s0, "subtask 1")
		}
	}
	if turns < 4 {
		t.Errorf("the subtasks took turns %d times: want each held several times over 1000 ms with a drift of %d", turns, drift)
	}
	// Subtask 0 has ended: it holds no one back.
	if s1.readUntilHeld(t) {
		t.Fatalf("subtask 0 ended and subtask 1 is still held, after %d records", len(s1.read))
	}
	for i, want := range []int{1000, 3000} {
		if got := subs[i].read; !slices.Equal(got, span(0, int64(want))) {
			t.Errorf("subtask %d read %d records, want each of its %d once in order", i, len(got), want)
		}
	}
}

// TestFileSourceAlignmentOff: without a maximum drift, or outside a job's
// run (no connector.Sharer), a subtask reads to its end whatever the
// others do.
func TestFileSourceAlignmentOff(t *testing.T) {
	for _, c := range []struct {
		drift  time.Duration
		shared bool
	}{{0, true}, {100 * time.Millisecond, false}} {
		subs := alignedSource(t, c.drift, c.shared, span(0, 1000), span(5000, 6000))
		if subs[1].readUntilHeld(t) || len(subs[1].read) != 1000 {
			t.Errorf("drift %v, shared %v: subtask 1 read %d of its 1000 records and was held", c.drift, c.shared, len(subs[1].read))
		}
	}
}

// TestFileSourceAlignmentAcrossSources: two file sources at parallelism 1
// in one timestamps.align-group (each with a drift of 100ms) keep pace
// with each other as the subtasks of one source do: the one ahead stops
// once more than its drift ahead of the other, and each reads all its
// records once. A source alone at parallelism 1 has no one to wait for.
func TestFileSourceAlignmentAcrossSources(t *testing.T) {
	const drift = 100
	dir := t.TempDir()
	var nodes []config.NodeConfig
	for i, times := range [][]int64{span(0, 1000), span(0, 3000)} {
		var b strings.Builder
		for _, v := range times {
			fmt.Fprintln(&b, v)
		}
		name := fmt.Sprintf("src%d", i)
		writeFile(t, filepath.Join(dir, name+".txt"), b.String())
		n := connectortest.SourceNode(name, "file", map[string]string{"path": filepath.Join(dir, name+".txt")})
		n.Watermark = config.WatermarkConfig{MaxDrift: drift * time.Millisecond, AlignGroup: "inputs"}
		nodes = append(nodes, n)
	}
	env := &connectortest.SharedEnv{Env: connectortest.New(t, 1, nodes...)}
	subs := make([]*alignedSubtask, 2)
	for i := range subs {
		s := &alignedSubtask{src: NewSource(env, i, 0, format.LinesFormat()), wm: eventtime.NewWatermarks(nodes[i].Watermark)}
		s.src.Align(i, s.wm)
		if s.src.lr.align == nil {
			t.Fatalf("source %d of a group of two has no part in the alignment", i)
		}
		subs[i] = s
	}
	s0, s1 := subs[0], subs[1]
	turns := 0
	for ; !s0.src.Done(); turns++ {
		if turns > 100 {
			t.Fatalf("source 0 not done after %d turns: %d and %d records read", turns, len(s0.read), len(s1.read))
		}
		for i, s := range []*alignedSubtask{s0, s1} {
			if s.readUntilHeld(t) && len(s0.read) > 0 && len(s1.read) > 0 {
				if d := max(s0.read[len(s0.read)-1]-s1.read[len(s1.read)-1], s1.read[len(s1.read)-1]-s0.read[len(s0.read)-1]); d > drift+2*64 {
					t.Fatalf("a source stopped %d ms ahead of the other: want at most just over the drift, %d ms", d, drift)
				}
				// Its drift as the metrics report it.
				if d := env.Metrics().Figures(i, 0).Drift; d <= drift || d > drift+2*64 {
					t.Fatalf("source %d, held, reports a drift of %d ms: want just over %d", i, d, drift)
				}
			}
		}
	}
	if turns < 4 {
		t.Errorf("the sources took turns %d times: want each held several times over 1000 ms with a drift of %d", turns, drift)
	}
	// Source 0 ended: it is ahead of no one.
	if d := env.Metrics().Figures(0, 0).Drift; d != 0 {
		t.Errorf("source 0, ended, reports a drift of %d ms: want 0", d)
	}
	if s1.readUntilHeld(t) {
		t.Fatalf("source 0 ended and source 1 is still held, after %d records", len(s1.read))
	}
	for i, want := range []int64{1000, 3000} {
		if got := subs[i].read; !slices.Equal(got, span(0, want)) {
			t.Errorf("source %d read %d records, want each of its %d once in order", i, len(got), want)
		}
	}

	// Without the group, each source at parallelism 1 is alone.
	nodes[0].Watermark.AlignGroup = ""
	alone := &connectortest.SharedEnv{Env: connectortest.New(t, 1, nodes[0])}
	src := NewSource(alone, 0, 0, format.LinesFormat())
	src.Align(0, eventtime.NewWatermarks(nodes[0].Watermark))
	if src.lr.align != nil {
		t.Errorf("a source alone at parallelism 1 has a part in an alignment")
	}
}
