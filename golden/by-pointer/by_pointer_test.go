package orders

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestOutput checks want/output.txt, what the generated program wrote
// (the golden test runs it), against the results computed here with plain
// loops over the same orders, independently of pipegen.
func TestOutput(t *testing.T) {
	var want []string
	line := func(sink string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, sink+": "+string(b))
	}
	type window struct{ shop, end int64 }
	windows := map[window]*Sum{}
	shops := map[int64]*Sum{}
	seen := map[string]*Seen{}
	for seq := uint64(0); ; seq++ {
		var o Order
		if !Next(seq, &o) {
			break
		}
		s := seen[o.User]
		if s == nil {
			s = &Seen{}
			seen[o.User] = s
		}
		s.Orders++
		s.Items += o.Items
		line("users", UserTotal{User: o.User, Order: o.ID, Orders: s.Orders, Items: s.Items})
		if o.Items > 2 {
			line("tags", Tag{Order: o.ID, Tag: "big"})
			line("tags", Tag{Order: o.ID, Tag: o.User})
		}
		for i := int64(0); i < o.Items; i++ {
			price := o.Price + i
			if price%2 != 0 {
				continue
			}
			gross := price * 120 / 100
			w := window{o.Shop, (o.Ms/1000 + 1) * 1000}
			add := func(m map[window]*Sum, k window) {
				if m[k] == nil {
					m[k] = &Sum{}
				}
				m[k].Gross += gross
				m[k].Lines++
			}
			add(windows, w)
			if shops[o.Shop] == nil {
				shops[o.Shop] = &Sum{}
			}
			shops[o.Shop].Gross += gross
			shops[o.Shop].Lines++
			line("pairs", Paired{Order: o.ID, N: i, User: o.User, Gross: gross})
		}
	}
	for w, s := range windows {
		line("windows", ShopSum{Shop: w.shop, End: w.end, Gross: s.Gross, Lines: s.Lines})
	}
	for user, s := range seen {
		line("sessions", UserTotal{User: user, Orders: s.Orders, Items: s.Items})
	}
	for shop, s := range shops {
		line("shops", ShopSum{Shop: shop, Gross: s.Gross, Lines: s.Lines})
	}
	slices.Sort(want)
	data, err := os.ReadFile("want/output.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !slices.Equal(got, want) {
		t.Errorf("want/output.txt differs from the plain computation:\n%s", diff(want, got))
	}
	for _, sink := range []string{"windows", "shops", "users", "pairs", "tags", "sessions"} {
		if !slices.ContainsFunc(want, func(l string) bool { return strings.HasPrefix(l, sink+": ") }) {
			t.Errorf("nothing for sink %s: the case does not test it", sink)
		}
	}
}

// diff lists the lines only one of want and got has.
func diff(want, got []string) string {
	n := map[string]int{}
	for _, l := range want {
		n[l]++
	}
	for _, l := range got {
		n[l]--
	}
	var out []string
	for l, c := range n {
		switch {
		case c > 0:
			out = append(out, fmt.Sprintf("missing: %s", l))
		case c < 0:
			out = append(out, fmt.Sprintf("extra:   %s", l))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
