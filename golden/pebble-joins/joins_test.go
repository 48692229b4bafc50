package joins

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestOutput checks want/output.txt against pairs computed here from the
// input, independently of pipegen: every pair of records within the
// bounds, bounds excluded as the pipeline says, of the records that are
// not late (the late events are in the output; the late payments too).
func TestOutput(t *testing.T) {
	events := readJSONL[Event](t, "input/events.jsonl")
	payments := readJSONL[Payment](t, "input/payments.jsonl")
	out := readLines(t, "want/output.txt")
	lateEvents := map[Event]int{}
	latePayments := map[Payment]int{}
	var got []string
	for _, l := range out {
		switch {
		case strings.HasPrefix(l, "out: late event "):
			var e Event
			fmt.Sscanf(strings.TrimPrefix(l, "out: late event "), "%s @%d", &e.User, &e.Ms)
			lateEvents[e]++
		case strings.HasPrefix(l, "late-payments: "):
			var p Payment
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "late-payments: ")), &p); err != nil {
				t.Fatal(err)
			}
			latePayments[p]++
		case strings.HasPrefix(l, "sessioned: "), strings.HasPrefix(l, "processed: "):
			// The session joins' pairs: TestSessionJoin.
		case strings.HasPrefix(l, "windowed: "):
			// The window join's pairs: want/output.txt pins them, and the
			// run on the memory backend must give them too
			// (TestGoldenOtherBackend).
		default:
			got = append(got, strings.TrimPrefix(l, "out: "))
		}
	}
	if len(lateEvents) == 0 || len(latePayments) == 0 {
		t.Fatalf("the input has no late events (%d) or payments (%d): the side outputs are not tested", len(lateEvents), len(latePayments))
	}
	onTime := func(late map[Event]int, es []Event) []Event {
		var keep []Event
		for _, e := range es {
			if late[e] > 0 {
				late[e]--
				continue
			}
			keep = append(keep, e)
		}
		return keep
	}
	ev := onTime(lateEvents, events)
	var ps []Payment
	for _, p := range payments {
		if latePayments[p] > 0 {
			latePayments[p]--
			continue
		}
		ps = append(ps, p)
	}
	var want []string
	same, edge := 0, 0
	for _, a := range ev {
		for _, b := range ev {
			if a.User != b.User {
				continue
			}
			if b.Ms == a.Ms {
				same++
			}
			if b.Ms > a.Ms && b.Ms <= a.Ms+1000 { // (0s, 1s]
				want = append(want, Next(a, b))
			}
		}
		for _, p := range ps {
			if p.User != a.User {
				continue
			}
			if p.Ms == a.Ms+500 || p.Ms == a.Ms-500 {
				edge++
			}
			if p.Ms > a.Ms-500 && p.Ms < a.Ms+500 { // (-500ms, 500ms)
				want = append(want, Paid(a, p))
			}
		}
	}
	if same <= len(ev) || edge == 0 {
		t.Fatalf("the input has no records on the excluded bounds (%d pairs at the same time, %d at 500ms): exclusive bounds are not tested", same-len(ev), edge)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("output has %d pairs, the input makes %d", len(got), len(want))
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

// TestSessionJoin checks the pairs of the session join same-visit (and
// below those of same-second-visit, on processing time) in
// want/output.txt against sessions computed here from the input,
// independently of pipegen: per user, the events' and payments' times
// each open [t, t+300ms), and those that overlap or touch are one
// session; every event pairs with every payment of its session. Its
// allowed lateness (5s) is longer than the input is out of order, so no
// record is late. The input must make sessions that merge: a record
// that bridges two sessions of the records before it in arrival order.
func TestSessionJoin(t *testing.T) {
	const gap = 300
	events := readJSONL[Event](t, "input/events.jsonl")
	payments := readJSONL[Payment](t, "input/payments.jsonl")
	type rec struct {
		user string
		ms   int64
		e    *Event
		p    *Payment
	}
	byUser := map[string][]rec{}
	for i := range events {
		byUser[events[i].User] = append(byUser[events[i].User], rec{events[i].User, events[i].Ms, &events[i], nil})
	}
	for i := range payments {
		byUser[payments[i].User] = append(byUser[payments[i].User], rec{payments[i].User, payments[i].Ms, nil, &payments[i]})
	}
	var want []string
	bridges := 0
	for _, recs := range byUser {
		// Merges: in each input's order (events, then payments: a
		// record bridges sessions in any order of the inputs that
		// keeps each input's), a record whose window touches two
		// sessions of the records before it.
		var open [][2]int64
		for _, r := range recs {
			lo, hi := r.ms, r.ms+gap
			n := 0
			var keep [][2]int64
			for _, s := range open {
				if s[0] <= hi && lo <= s[1] {
					lo, hi = min(lo, s[0]), max(hi, s[1])
					n++
				} else {
					keep = append(keep, s)
				}
			}
			if n >= 2 {
				bridges++
			}
			open = append(keep, [2]int64{lo, hi})
		}
		slices.SortFunc(recs, func(a, b rec) int { return int(a.ms - b.ms) })
		for i := 0; i < len(recs); {
			j, end := i+1, recs[i].ms+gap
			for j < len(recs) && recs[j].ms <= end {
				end = max(end, recs[j].ms+gap)
				j++
			}
			for _, l := range recs[i:j] {
				for _, r := range recs[i:j] {
					if l.e != nil && r.p != nil {
						want = append(want, Paid(*l.e, *r.p))
					}
				}
			}
			i = j
		}
	}
	if bridges == 0 {
		t.Fatal("no record of the input merges two sessions: merges are not tested")
	}
	var got []string
	for _, l := range readLines(t, "want/output.txt") {
		if s, ok := strings.CutPrefix(l, "sessioned: "); ok {
			got = append(got, s)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the session join emitted %d pairs, the input's sessions make %d", len(got), len(want))
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
	t.Logf("%d pairs, %d records merging sessions", len(got), bridges)

	// same-second-visit: sessions of processing time with a gap of 1h,
	// keyed by user and second of event time: in a run, one session per
	// key, which the input's end fires: every event pairs with every
	// payment of its user and second.
	want, got = nil, nil
	for _, e := range events {
		for _, p := range payments {
			if e.User == p.User && e.Ms/1000 == p.Ms/1000 {
				want = append(want, Paid(e, p))
			}
		}
	}
	for _, l := range readLines(t, "want/output.txt") {
		if s, ok := strings.CutPrefix(l, "processed: "); ok {
			got = append(got, s)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the processing-time session join emitted %d pairs, the input makes %d", len(got), len(want))
	}
}

func readJSONL[T any](t *testing.T, path string) []T {
	var out []T
	for _, l := range readLines(t, path) {
		var v T
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
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
