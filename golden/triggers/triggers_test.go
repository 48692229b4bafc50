package triggers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestOutput checks want/output.txt against the results computed here from
// the input and the documented semantics (docs/eventtime.md, Triggers),
// without pipegen's engines: the source (one subtask, no out-of-orderness)
// looks at its watermark after every 64th record, the highest time so far
// minus 1 ms, and sends it when it moved, and the end of time at the end;
// every window subtask sees each watermark after the records before it.
func TestOutput(t *testing.T) {
	clicks := readClicks(t)
	var want, late []string
	type step struct {
		c  *Click
		wm int64 // a watermark, when c is nil
	}
	var steps []step
	maxTS, wm := int64(math.MinInt64), int64(math.MinInt64)
	for i := range clicks {
		steps = append(steps, step{c: &clicks[i]})
		maxTS = max(maxTS, clicks[i].Ms)
		if (i+1)%64 == 0 && maxTS-1 > wm {
			wm = maxTS - 1
			steps = append(steps, step{wm: wm})
		}
	}
	steps = append(steps, step{wm: math.MaxInt64})

	models := []*model{
		{name: "counts", size: 60000, slide: 60000, lateness: 60000, count: 3},
		{name: "deltas", size: 60000, slide: 30000, every: 10000, discard: true},
		{name: "sessions", gap: 20000, count: 5},
		{name: "dynamic", gap: -1, count: 4},
	}
	want = append(want, countWindows(clicks, 10, 10)...)
	want = append(want, countWindows(clicks, 5, 2)...)
	for _, m := range models {
		m.wm = math.MinInt64
		m.out = &want
		for _, s := range steps {
			if s.c != nil {
				if !m.add(*s.c) && m.name == "counts" {
					b, _ := json.Marshal(s.c)
					late = append(late, "late: "+string(b))
				}
			} else {
				m.advance(s.wm)
			}
		}
	}
	var got, gotLate []string
	for _, l := range readLines(t, "want/output.txt") {
		if strings.HasPrefix(l, "late: ") {
			gotLate = append(gotLate, l)
		} else {
			got = append(got, strings.TrimPrefix(l, "out: "))
		}
	}
	firings := map[string]int{}
	for _, w := range want {
		firings[strings.Fields(w)[2]]++
	}
	if firings["early"] == 0 || firings["on-time"] == 0 || firings["late"] == 0 || len(late) == 0 {
		t.Fatalf("the input makes firings %v and %d late records: not every case is tested", firings, len(late))
	}
	slices.Sort(want)
	slices.Sort(got)
	slices.Sort(late)
	slices.Sort(gotLate)
	if !slices.Equal(late, gotLate) {
		t.Errorf("late records differ:\n got %v\nwant %v", gotLate, late)
	}
	if !slices.Equal(got, want) {
		t.Errorf("output has %d results, the model %d", len(got), len(want))
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("missing: %s", w)
			}
		}
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("unexpected: %s", g)
			}
		}
	}
}

// model is one windowed aggregate with a trigger, per key, as the docs
// describe it.
type model struct {
	name                       string
	size, slide, gap, lateness int64
	count                      int
	every                      int64
	discard                    bool
	wm                         int64
	wins                       map[string][]*win // per key, sorted by start
	out                        *[]string
	seq                        int
}

type win struct {
	start, end int64
	n          int // records since the last firing
	sum        Sum
	fired      bool
	seq        int
}

func (m *model) maxTS(w *win) int64 { return w.end - 1 }

func (m *model) emit(key string, w *win, f pipegen.Firing) {
	if m.discard && w.n == 0 {
		return
	}
	*m.out = append(*m.out, fmt.Sprintf("%s [%d,%d) %s n=%d ms=%d", key, w.start, w.end, f, w.sum.N, w.sum.Ms))
	w.n = 0
	if m.discard {
		w.sum = Sum{}
	}
}

func (m *model) add(c Click) bool {
	if m.wins == nil {
		m.wins = map[string][]*win{}
	}
	if m.gap != 0 {
		return m.addSession(c)
	}
	var bounds [][2]int64
	for s := c.Ms - ((c.Ms%m.slide)+m.slide)%m.slide; s > c.Ms-m.size; s -= m.slide {
		bounds = append(bounds, [2]int64{s, s + m.size})
	}
	slices.Reverse(bounds)
	anyOnTime := false
	for _, b := range bounds {
		if b[1]-1+m.lateness <= m.wm {
			continue // late for this window
		}
		anyOnTime = true
		var w *win
		for _, x := range m.wins[c.User] {
			if x.start == b[0] {
				w = x
			}
		}
		if w == nil {
			w = &win{start: b[0], end: b[1], fired: b[1]-1 <= m.wm, seq: m.seq}
			m.seq++
			m.wins[c.User] = append(m.wins[c.User], w)
		}
		m.addTo(c, w)
	}
	return anyOnTime || len(bounds) == 0
}

func (m *model) addTo(c Click, w *win) {
	w.n++
	Add(&w.sum, c)
	switch {
	case w.fired:
		m.emit(c.User, w, pipegen.Late)
	case m.count > 0 && w.n >= m.count:
		m.emit(c.User, w, pipegen.Early)
	}
}

func (m *model) addSession(c Click) bool {
	ws := m.wins[c.User]
	gap := m.gap
	if gap < 0 {
		gap = Gap(c).Milliseconds()
	}
	nw := &win{start: c.Ms, end: c.Ms + gap}
	var keep, touch []*win
	for _, x := range ws {
		if x.start <= nw.end && nw.start <= x.end {
			touch = append(touch, x)
		} else {
			keep = append(keep, x)
		}
	}
	lo, hi := nw.start, nw.end
	for _, x := range touch {
		lo, hi = min(lo, x.start), max(hi, x.end)
	}
	if hi-1+m.lateness <= m.wm {
		return false
	}
	var w *win
	if len(touch) == 0 {
		w = nw
		w.seq = m.seq
		m.seq++
	} else {
		slices.SortFunc(touch, func(a, b *win) int { return int(a.start - b.start) })
		w = touch[0]
		for _, o := range touch[1:] {
			w.n += o.n
			Merge(&w.sum, &o.sum)
		}
	}
	w.start, w.end = lo, hi
	w.fired = w.end-1 <= m.wm
	m.wins[c.User] = append(keep, w)
	m.addTo(c, w)
	return true
}

func (m *model) advance(wm int64) {
	prev := m.wm
	m.wm = max(m.wm, wm)
	type kw struct {
		key string
		w   *win
	}
	var all []kw
	for k, ws := range m.wins {
		for _, w := range ws {
			all = append(all, kw{k, w})
		}
	}
	slices.SortFunc(all, func(a, b kw) int {
		if a.w.end != b.w.end {
			return int(a.w.end - b.w.end)
		}
		return a.w.seq - b.w.seq
	})
	if m.every > 0 && wm > prev && (prev == math.MinInt64 || floorDiv(wm, m.every) > floorDiv(prev, m.every)) {
		for _, x := range all {
			if !x.w.fired && x.w.n > 0 && m.maxTS(x.w) > wm {
				m.emit(x.key, x.w, pipegen.Early)
			}
		}
	}
	for _, x := range all {
		if !x.w.fired && m.maxTS(x.w) <= m.wm {
			x.w.fired = true
			m.emit(x.key, x.w, pipegen.OnTime)
		}
	}
	for k, ws := range m.wins {
		var keep []*win
		for _, w := range ws {
			if m.maxTS(w)+m.lateness > m.wm {
				keep = append(keep, w)
			}
		}
		m.wins[k] = keep
	}
}

// countWindows are the results of count windows of size clicks of a
// user, every every clicks: the last size clicks at every every-th; in a
// window not complete at the end, nothing.
func countWindows(clicks []Click, size, every int) []string {
	var out []string
	seen := map[string][]Click{}
	for _, c := range clicks {
		cs := append(seen[c.User], c)
		seen[c.User] = cs
		if len(cs)%every != 0 {
			continue
		}
		var s Sum
		for _, x := range cs[max(0, len(cs)-size):] {
			Add(&s, x)
		}
		out = append(out, CountResult(c.User, &s))
	}
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func readClicks(t *testing.T) []Click {
	var out []Click
	for _, l := range readLines(t, "input/clicks.jsonl") {
		var c Click
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if s.Text() != "" {
			out = append(out, s.Text())
		}
	}
	return out
}
