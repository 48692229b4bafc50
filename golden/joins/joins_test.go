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
