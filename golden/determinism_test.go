package golden

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	totals "github.com/pipegen/pipegen/golden/running-totals"
)

// TestDeterministicRunningTotals runs the running-totals program (a
// source at parallelism 1, a map without a parallelism of its own, a
// keyed reduce emitting running totals) twice at parallelism 1, 2 and 4.
// Every run must commit the same running totals per customer, in the same
// order, equal to an independent computation, and two runs at one
// parallelism the same bytes: the same input gives the same output at
// any parallelism.
func TestDeterministicRunningTotals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a golden program")
	}
	bin := program(t, wantKey("running-totals"), "./running-totals/want")
	want := expectedTotals()
	var reference []string // every committed line, sorted, of the first run
	for _, p := range []int{1, 2, 4} {
		var first map[string]string
		for run := range 2 {
			files := runTotals(t, bin, p)
			byCustomer, lines := readTotals(t, files)
			if d := diffTotals(want, byCustomer); d != "" {
				t.Errorf("parallelism %d, run %d: the running totals differ from an independent computation:\n%s", p, run+1, d)
			}
			if reference == nil {
				reference = lines
			} else if !slices.Equal(lines, reference) {
				t.Errorf("parallelism %d, run %d: the committed lines differ from those of parallelism 1", p, run+1)
			}
			if first == nil {
				first = files
			} else if d := differentFiles(first, files); d != nil {
				t.Errorf("parallelism %d: two runs committed different bytes in %v", p, d)
			}
		}
	}
}

// expectedTotals computes every customer's running totals from the
// generated orders, without the pipeline's functions.
func expectedTotals() map[string][]totals.Total {
	want := map[string][]totals.Total{}
	for seq := uint64(0); ; seq++ {
		o, ok := totals.NextOrder(seq)
		if !ok {
			return want
		}
		var t totals.Total
		if prev := want[o.Customer]; len(prev) > 0 {
			t = prev[len(prev)-1]
		}
		t.Customer = o.Customer
		t.Orders++
		t.Cents += o.Cents
		t.Last = o.Seq
		want[o.Customer] = append(want[o.Customer], t)
	}
}

// runTotals runs the program at parallelism p in a directory of its own
// and returns the files it committed under out/, by name.
func runTotals(t *testing.T, bin string, p int) map[string]string {
	t.Helper()
	work := t.TempDir()
	cmd := exec.Command(bin, "run", "--parallelism", strconv.Itoa(p), "--checkpoint-dir", filepath.Join(work, "checkpoints"), "--quiet")
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run --parallelism %d: %v\n%s", p, err, out)
	}
	entries, err := os.ReadDir(filepath.Join(work, "out"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(work, "out", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

var digits = regexp.MustCompile(`\d+`)

// partOrder compares part file names by the numbers in them (subtask,
// then sequence), so that part-0-10 comes after part-0-9.
func partOrder(a, b string) int {
	na, nb := digits.FindAllString(a, -1), digits.FindAllString(b, -1)
	for i := range min(len(na), len(nb)) {
		x, _ := strconv.Atoi(na[i])
		y, _ := strconv.Atoi(nb[i])
		if x != y {
			return x - y
		}
	}
	return strings.Compare(a, b)
}

// readTotals decodes the committed files: each customer's totals in the
// order they were written, and every line, sorted.
func readTotals(t *testing.T, files map[string]string) (map[string][]totals.Total, []string) {
	t.Helper()
	byCustomer := map[string][]totals.Total{}
	var lines []string
	for _, name := range slices.SortedFunc(maps.Keys(files), partOrder) {
		for _, line := range strings.Split(strings.TrimSuffix(files[name], "\n"), "\n") {
			var tot totals.Total
			if err := json.Unmarshal([]byte(line), &tot); err != nil {
				t.Fatalf("%s: %q: %v", name, line, err)
			}
			byCustomer[tot.Customer] = append(byCustomer[tot.Customer], tot)
			lines = append(lines, line)
		}
	}
	slices.Sort(lines)
	return byCustomer, lines
}

// diffTotals describes how got differs from want: the first difference of
// each customer, and how many customers differ.
func diffTotals(want, got map[string][]totals.Total) string {
	var b strings.Builder
	differ := 0
	for _, c := range slices.Sorted(maps.Keys(want)) {
		w, g := want[c], got[c]
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		if i == len(w) && i == len(g) {
			continue
		}
		if differ++; differ <= 3 {
			fmt.Fprintf(&b, "customer %s, total %d of %d (got %d): want %+v, got %+v\n", c, i+1, len(w), len(g), at(w, i), at(g, i))
		}
	}
	for c := range got {
		if _, ok := want[c]; !ok {
			differ++
			fmt.Fprintf(&b, "unexpected customer %q\n", c)
		}
	}
	if differ > 3 {
		fmt.Fprintf(&b, "(%d customers differ)\n", differ)
	}
	return b.String()
}

// differentFiles lists the names of the files that a and b do not hold
// alike.
func differentFiles(a, b map[string]string) []string {
	var names []string
	for name, x := range a {
		if y, ok := b[name]; !ok || x != y {
			names = append(names, name)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func at(ts []totals.Total, i int) any {
	if i < len(ts) {
		return ts[i]
	}
	return "nothing"
}
