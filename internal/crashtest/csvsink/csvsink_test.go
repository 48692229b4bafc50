package csvsink_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/internal/crashtest"
	"github.com/pipegen/pipegen/internal/crashtest/csvsink"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
const defaultSeed = 20261202

// orders is the number of rows of the input: with Delay on one in ten,
// about 2 s.
const orders = 20000

var notes = []string{"", "plain", "with, comma", "with; semicolon", `say "hi"`, " leading space", "trailing ", "héllo wörld 😀", `\.`, "-", "1e5"}

// input makes the orders of the input file.
func input() []csvsink.Order {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]csvsink.Order, orders)
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		placed := start.Add(time.Duration(r.Int64N(int64(30 * 24 * time.Hour))))
		if i%3 == 0 {
			placed = placed.In(time.FixedZone("", 5*3600+30*60))
		}
		out[i] = csvsink.Order{
			ID:       int64(i) - 100,
			Customer: fmt.Sprintf("cust-%d", r.IntN(500)),
			Amount:   float64(r.IntN(200000)-20000) / 100,
			Placed:   placed,
			Note:     notes[r.IntN(len(notes))],
		}
	}
	return out
}

// writeInput writes orders as a csv file with a header, with
// encoding/csv.
func writeInput(t *testing.T, path string, os_ []csvsink.Order) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Write([]string{"id", "customer", "amount", "placed", "note"}))
	for _, o := range os_ {
		must(w.Write([]string{strconv.FormatInt(o.ID, 10), o.Customer, strconv.FormatFloat(o.Amount, 'f', -1, 64), o.Placed.Format(time.RFC3339Nano), o.Note}))
	}
	w.Flush()
	must(w.Error())
	must(os.WriteFile(path, b.Bytes(), 0o644))
}

// expected is the sink's committed lines, sorted, without running the
// job: each order priced, its cells written as the manual says (floats
// as encoding/json writes them, times in RFC 3339 with nanoseconds,
// durations in Go syntax) and joined by encoding/csv with ';'.
func expected(t *testing.T, os_ []csvsink.Order) []string {
	csvsink.Delay = 0
	var lines []string
	for _, o := range os_ {
		p := csvsink.Price(o)
		gross, err := json.Marshal(p.Gross)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Comma = ';'
		if err := w.Write([]string{strconv.FormatInt(p.ID, 10), p.Customer, string(gross), strconv.FormatBool(p.Large),
			p.Placed.Format(time.RFC3339Nano), p.Due.String(), strconv.FormatUint(uint64(p.Cents), 10), p.Note}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		lines = append(lines, strings.TrimSuffix(b.String(), "\n"))
	}
	slices.Sort(lines)
	return lines
}

// TestMain loads the package's Go code once and links each program once
// for all the tests (crashtest.Main).
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected: the expected output reads back, with encoding/csv, into
// the priced orders: the test's own answer is a faithful one.
func TestExpected(t *testing.T) {
	in := input()
	want := expected(t, in)
	byID := map[string]csvsink.Priced{}
	for _, o := range in {
		byID[strconv.FormatInt(o.ID, 10)] = csvsink.Price(o)
	}
	r := csv.NewReader(strings.NewReader(strings.Join(want, "\n")))
	r.Comma = ';'
	rows, err := r.ReadAll()
	if err != nil || len(rows) != orders {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	quoted := 0
	for _, row := range rows {
		p := byID[row[0]]
		if row[1] != p.Customer || row[7] != p.Note {
			t.Fatalf("row %q, want %+v", row, p)
		}
		if strings.ContainsAny(p.Note, `;" `) {
			quoted++
		}
	}
	if quoted < orders/4 {
		t.Errorf("only %d rows have a cell to quote", quoted)
	}
}

// TestCrash runs the job once without failures and once killed at random
// moments (package crashtest), and checks that both commit exactly the
// expected lines, each part file starting with the header (the verifier
// drops it, and fails when two files' first lines differ).
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	in := input()
	path := filepath.Join(t.TempDir(), "orders.csv")
	writeInput(t, path, in)
	crashtest.Run(t, "memory", crashtest.Seed(t, defaultSeed), []string{"sources.orders.path=" + path}, map[string][]string{"out": expected(t, in)})
}
