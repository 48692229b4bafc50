package crash

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/internal/crashtest"
)

// q4Config is the events of TestCrashQ4, generated at 40,000 a second so
// that a clean run lasts about 2.5 s and the kills land in it.
var q4Config = nexmark.Config{Events: 100_000, Rate: 1000, Seed: 12}

// TestCrashQ4 builds q4 with a file sink, runs it without failures, then
// again killing it with SIGKILL at random moments and restarting it each
// time, and checks that both runs commit exactly the reference's average
// prices: the auctions' state and their timers (kept with the state,
// restored apart from it and found again through it) survive the kills,
// and every auction closes once.
func TestCrashQ4(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	g := nexmark.NewGenerator(q4Config)
	events := make([]nexmark.Event, q4Config.Events)
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
	t.Setenv("NEXMARK_EVENTS", fmt.Sprint(q4Config.Events))
	t.Setenv("NEXMARK_RATE", fmt.Sprint(q4Config.Rate))
	t.Setenv("NEXMARK_SEED", fmt.Sprint(q4Config.Seed))
	for _, backend := range crashtest.Backends("memory", "pebble") {
		t.Run(backend, func(t *testing.T) {
			crashtest.RunFile(t, "q4.yaml", backend, crashtest.Seed(t, 7), []string{"sources.events.rate=40000"}, map[string][]string{"out": want})
		})
	}
}
