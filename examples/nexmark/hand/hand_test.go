package hand_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/examples/nexmark/hand"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

var cfg = nexmark.Config{Events: 100_000, Rate: 1000, Seed: 7}

// TestMatchesReference runs every hand-written query on the events of the
// pipelines' test, from the generator and from JSON lines, and compares
// its output with the reference's.
func TestMatchesReference(t *testing.T) {
	g := nexmark.NewGenerator(cfg)
	events := make([]nexmark.Event, cfg.Events)
	var jsonl bytes.Buffer
	for i := range events {
		events[i] = g.Event(uint64(i))
		line, err := json.Marshal(events[i])
		if err != nil {
			t.Fatal(err)
		}
		jsonl.Write(append(line, '\n'))
	}
	for _, q := range nexmark.Queries {
		want, err := nexmark.Reference(q, events)
		if err != nil {
			t.Fatal(err)
		}
		for _, from := range []string{"generator", "jsonl"} {
			next := hand.Generated(g)
			if from == "jsonl" {
				next = hand.JSONLines(bytes.NewReader(jsonl.Bytes()))
			}
			var out bytes.Buffer
			if err := hand.Run(q, next, &out); err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s from %s: %d lines, the reference %d; first %.200q, want %.200q", q, from, len(got), len(want), got[0], want[0])
			}
		}
	}
}

// TestAppendEvent: the hand-written JSON of events is encoding/json's.
func TestAppendEvent(t *testing.T) {
	g := nexmark.NewGenerator(cfg)
	for n := range uint64(200) {
		e := g.Event(n)
		want, _ := json.Marshal(e)
		if got := hand.AppendEvent(nil, &e); string(got) != string(want)+"\n" {
			t.Fatalf("event %d: got\n%s\nwant\n%s", n, got, want)
		}
	}
}
