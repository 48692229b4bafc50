package observe_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pipegen/pipegen/internal/cdp"
	"github.com/pipegen/pipegen/internal/goldenfile"
)

// screenshot is where TestStatusPage -update writes its picture of the
// page, which the README shows.
const screenshot = "../../docs/status-page.png"

// page is what the test reads off the status page in the browser.
type page struct {
	Refreshes   int      `json:"refreshes"`
	Nodes       []string `json:"nodes"`
	Chains      int      `json:"chains"`
	Edges       int      `json:"edges"`
	Checkpoints []string `json:"checkpoints"`
	Ticks       float64  `json:"ticks"`
	Drops       []string `json:"drops"`
	Watermarks  []string `json:"watermarks"`
	State       string   `json:"state"`
	Busy        float64  `json:"busy"`
}

const readPage = `(() => {
  if (!document.body || !document.getElementById('state')) return { refreshes: 0 };
  const q = s => [...document.querySelectorAll(s)];
  const ticks = document.querySelector('#graph-svg g.node[data-node="ticks"]');
  return {
    refreshes: +(document.body.dataset.refreshes || 0),
    nodes: q('#graph-svg g.node').map(g => g.dataset.node),
    chains: q('#graph-svg g.chain').length,
    edges: q('#graph-svg path[marker-end]').length,
    checkpoints: q('#checkpoints tbody tr').map(tr => tr.children[0].textContent),
    ticks: ticks ? +ticks.dataset.out : -1,
    drops: q('#drops tbody tr').map(tr => tr.children[0].textContent + ' ' + tr.children[3].textContent),
    watermarks: q('#watermarks tbody tr').map(tr => tr.children[0].textContent),
    state: document.getElementById('state').textContent,
    busy: Math.max(...q('#graph-svg g.chain').map(g => +g.dataset.busy)),
  };
})()`

// TestStatusPage loads the status page of a running job in headless
// Chromium and checks that it draws the job graph, its checkpoint table,
// watermarks and drops, and that they update by themselves. With -update
// it writes docs/status-page.png. Without Chromium it is skipped, but in
// CI (.ci/run installs Debian's chromium) it must run.
func TestStatusPage(t *testing.T) {
	bin := cdp.Find()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on this machine, and CI must run this test: .ci/run installs Debian's chromium")
		}
		t.Skip("no chromium on this machine (apt-get install chromium, or set CHROMIUM): the status page is not tested in a browser")
	}
	// Numbers at 2000/s keep event time moving for ten seconds.
	j := start(t, nil, "--http", "127.0.0.1:0", "--set", "sources.nums.rate=2000")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := cdp.Start(ctx, bin, t.TempDir(), 1280, 1040)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate("http://" + j.addr + "/"); err != nil {
		t.Fatal(err)
	}
	read := func(min int) page {
		t.Helper()
		var p page
		deadline := time.Now().Add(30 * time.Second)
		for {
			if err := b.Eval(readPage, &p); err != nil {
				t.Fatal(err)
			}
			if p.Refreshes >= min {
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page refreshed %d times in 30s, want %d: %+v\n%s", p.Refreshes, min, p, j.stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	first := read(2)
	want := []string{"nums", "evens", "readings", "good", "per-second", "counts", "sums", "out", "ticks", "tick-out", "marks", "pairs", "paired"}
	got := slices.Clone(first.Nodes)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("graph nodes %v, want %v", got, want)
	}
	// Chains: nums+evens, readings+good, marks, ticks+tick-out,
	// per-second+counts, sums+out, pairs+paired; edges: four hash edges
	// between chains and six fused ones.
	if first.Chains != 7 || first.Edges != 10 {
		t.Errorf("graph has %d chains and %d edges, want 7 and 10", first.Chains, first.Edges)
	}
	if first.State != "running" {
		t.Errorf("state %q, want running", first.State)
	}
	// Three more refreshes: a second and a half or more later.
	later := read(first.Refreshes + 3)
	newest := func(p page) int {
		if len(p.Checkpoints) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(p.Checkpoints[0])
		return n
	}
	if newest(later) <= newest(first) || newest(first) == 0 {
		t.Errorf("checkpoint table did not update: newest %v, then %v", first.Checkpoints, later.Checkpoints)
	}
	if later.Ticks <= first.Ticks || first.Ticks < 0 {
		t.Errorf("the ticks' count did not go up: %v, then %v", first.Ticks, later.Ticks)
	}
	if later.Busy <= 0 || later.Busy > 1 {
		t.Errorf("the busiest chain is busy %v of its time, want a share above 0", later.Busy)
	}
	if !slices.Contains(later.Drops, "readings 3") {
		t.Errorf("drops table %v, want readings with 3 dropped", later.Drops)
	}
	if !slices.Contains(later.Watermarks, "per-second") {
		t.Errorf("watermarks table %v, want per-second", later.Watermarks)
	}
	if *goldenfile.Update {
		png, err := b.Screenshot()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.FromSlash(screenshot), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j.stop(t)
}
