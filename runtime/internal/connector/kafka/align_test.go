package kafka

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
)

// alignedSubtask is a subtask of a Kafka source of lines that are event
// times in milliseconds, with its watermarks (no out-of-orderness) and the
// times it read.
type alignedSubtask struct {
	src  *Source[string]
	wm   *Watermarks
	read []int64
}

// readUntilHeld reads the subtask as its generated loop would, until it is
// held by the alignment or done, and reports whether it was held. Next
// also returns nothing while a fetch is on its way: it reads on then.
func (s *alignedSubtask) readUntilHeld(t *testing.T) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		line, ok := s.src.Next()
		if !ok {
			switch {
			case s.src.Done():
				return false
			case s.src.align.Hold():
				return true
			case time.Now().After(deadline):
				t.Fatalf("neither held nor done after 10 s, %d records read", len(s.read))
			}
			continue
		}
		ts, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		s.read = append(s.read, ts)
		s.wm.Observe(ts)
	}
}

// TestSourceAlignment reads the two subtasks of a bounded Kafka source with
// timestamps.max-drift 100ms in turn, each owning one partition of times a
// millisecond apart, one of 1000 and one of 3000: a subtask stops reading
// once its watermark is more than the drift ahead of the other's, goes on
// as the other catches up, and reads to its end once the other has ended.
// Every record is read once, in order.
func TestSourceAlignment(t *testing.T) {
	const drift = 100
	brokers := cluster(t, 2, "in")
	lens := []int{1000, 3000}
	for p, n := range lens {
		var vs []string
		for v := range n {
			vs = append(vs, fmt.Sprint(v))
		}
		produce(t, brokers, "in", int32(p), vs...)
	}
	n := connectortest.SourceNode("in", "kafka", map[string]string{"brokers": brokers, "topic": "in", "bounded": "latest"})
	n.Watermark = config.WatermarkConfig{MaxDrift: drift * time.Millisecond}
	env := &connectortest.SharedEnv{Env: connectortest.New(t, 2, n)}
	subs := make([]*alignedSubtask, 2)
	for i := range subs {
		src := NewSource(env, 0, i, format.LinesFormat())
		s := &alignedSubtask{src: src, wm: newWatermarks(src, n.Watermark)}
		src.Align(0, s.wm)
		subs[i] = s
	}
	ahead := func(a, b *alignedSubtask) int64 { return a.read[len(a.read)-1] - b.read[len(b.read)-1] }
	// Watermarks come every 64 records, a record a millisecond here: the
	// one held has read at most that much past the drift.
	held := func(a, b *alignedSubtask) {
		t.Helper()
		if len(b.read) == 0 {
			return // the other has no watermark yet
		}
		if d := ahead(a, b); d <= drift || d > drift+2*64 {
			t.Fatalf("a subtask stopped %d ms ahead of the other: want just over the drift, %d ms", d, drift)
		}
	}
	turns := 0
	for ; !subs[0].src.Done() || !subs[1].src.Done(); turns++ {
		if turns > 200 {
			t.Fatalf("not done after %d turns: %d and %d records read", turns, len(subs[0].read), len(subs[1].read))
		}
		for i, s := range subs {
			if !s.src.Done() && s.readUntilHeld(t) {
				held(s, subs[1-i])
			}
		}
	}
	if turns < 4 {
		t.Errorf("the subtasks took %d turns: want each held several times with a drift of %d ms", turns, drift)
	}
	var all []int64
	for _, s := range subs {
		if !slices.IsSorted(s.read) {
			t.Errorf("a subtask read its partition out of order")
		}
		all = append(all, s.read...)
	}
	slices.Sort(all)
	var want []int64
	for _, n := range lens {
		for v := range n {
			want = append(want, int64(v))
		}
	}
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Errorf("read %d records, want each of the %d once", len(all), len(want))
	}
}
