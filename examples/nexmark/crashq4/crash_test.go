// Package crashq4 kills Nexmark q4, whose process operator keeps its
// timers with its keyed state, and checks the committed output.
package crashq4

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/internal/crashtest"
)

// config is the events of the test, generated at 40,000 a second so that
// a clean run lasts about 2.5 s and the kills land in it.
var config = nexmark.Config{Events: 100_000, Rate: 1000, Seed: 12}

// TestCrash builds q4 with a file sink, runs it without failures, then
// again killing it with SIGKILL at random moments and restarting it each
// time, and checks that every run commits exactly
// the reference's average prices: the auctions' state and their timers
// (restored apart from the state, then found again through it) survive
// the kills, and every auction closes once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	g := nexmark.NewGenerator(config)
	events := make([]nexmark.Event, config.Events)
	for i := range events {
		events[i] = g.Event(uint64(i))
	}
	want, err := nexmark.Reference("q4", events)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 3 {
		t.Fatalf("the reference has %d categories: the test would prove little", len(want))
	}
	slices.Sort(want)
	t.Setenv("NEXMARK_EVENTS", fmt.Sprint(config.Events))
	t.Setenv("NEXMARK_RATE", fmt.Sprint(config.Rate))
	t.Setenv("NEXMARK_SEED", fmt.Sprint(config.Seed))
	for _, backend := range crashtest.Backends("memory", "pebble") {
		t.Run(backend, func(t *testing.T) {
			crashtest.Run(t, backend, crashtest.Seed(t, 7), []string{"sources.events.rate=40000"}, map[string][]string{"out": want})
		})
	}
}
