// Package crash kills Nexmark q8 at parallelism 1, where its window join
// runs in the source's goroutine, and checks the committed output.
package crash

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/internal/crashtest"
)

// config is the events of the test: 100 s of event time (ten windows of
// 10 s), generated at 40,000 a second so that a clean run lasts about
// 2.5 s and the kills land in it.
var config = nexmark.Config{Events: 100_000, Rate: 1000, Seed: 11}

// TestCrash builds q8 with a file sink (q8.yaml), runs it without failures, then
// again killing it with SIGKILL at random moments and restarting it each
// time, and checks that both runs commit exactly the reference's new
// users: the join's buffered people and sellers and the sellers' windows
// survive the kills, exactly once, on the path where the source calls the
// join record by record.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	g := nexmark.NewGenerator(config)
	events := make([]nexmark.Event, config.Events)
	for i := range events {
		events[i] = g.Event(uint64(i))
	}
	want, err := nexmark.Reference("q8", events)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 100 {
		t.Fatalf("the reference has %d new users: the test would prove little", len(want))
	}
	slices.Sort(want)
	t.Setenv("NEXMARK_EVENTS", fmt.Sprint(config.Events))
	t.Setenv("NEXMARK_RATE", fmt.Sprint(config.Rate))
	t.Setenv("NEXMARK_SEED", fmt.Sprint(config.Seed))
	for _, backend := range crashtest.Backends("memory") {
		t.Run(backend, func(t *testing.T) {
			crashtest.RunFile(t, "q8.yaml", backend, crashtest.Seed(t, 5), []string{"sources.events.rate=40000"}, map[string][]string{"out": want})
		})
	}
}
