package nexmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Queries are the queries of this example, as queries/NAME.yaml names
// them.
var Queries = []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8"}

// Reference computes query q over all of events at once, the plain way,
// as its published SQL reads (with the differences the query's comment in
// queries.go states), and returns its output as the pipeline prints it:
// one JSON value per line, here sorted. It shares no code with the
// pipelines' functions but the record types.
func Reference(q string, events []Event) ([]string, error) {
	var out []any
	bids := func(yield func(Bid) bool) {
		for _, e := range events {
			if e.Type == BidEvent && !yield(e.Bid) {
				return
			}
		}
	}
	switch q {
	case "q0":
		for b := range bids {
			out = append(out, b)
		}
	case "q1":
		for b := range bids {
			out = append(out, EuroBid{b.Auction, b.Bidder, float64(b.Price*908) / 1000, b.DateTime, b.Extra})
		}
	case "q2":
		for b := range bids {
			if b.Auction%123 == 0 {
				out = append(out, AuctionPrice{b.Auction, b.Price})
			}
		}
	case "q3":
		people := map[int64]Person{}
		for _, e := range events {
			if p := e.Person; e.Type == PersonEvent && (p.State == "OR" || p.State == "ID" || p.State == "CA") {
				people[p.ID] = *p
			}
		}
		for _, e := range events {
			if a := e.Auction; e.Type == AuctionEvent && a.Category == 10 {
				if p, ok := people[a.Seller]; ok {
					out = append(out, LocalItem{p.Name, p.City, p.State, a.ID})
				}
			}
		}
	case "q4":
		auctions := map[int64]Auction{}
		for _, e := range events {
			if e.Type == AuctionEvent {
				auctions[e.Auction.ID] = *e.Auction
			}
		}
		final := map[int64]int64{}
		for b := range bids {
			if a, ok := auctions[b.Auction]; ok && b.DateTime >= a.DateTime && b.DateTime <= a.Expires {
				if p, seen := final[a.ID]; !seen || b.Price > p {
					final[a.ID] = b.Price
				}
			}
		}
		sum, n := map[int64]int64{}, map[int64]int64{}
		for id, p := range final {
			sum[auctions[id].Category] += p
			n[auctions[id].Category]++
		}
		for c := range sum {
			out = append(out, CategoryPrice{c, sum[c] / n[c]})
		}
	case "q5":
		type key struct{ auction, end int64 }
		counts := map[key]int64{}
		for b := range bids {
			for start := b.DateTime - b.DateTime%2000; start > b.DateTime-10000; start -= 2000 {
				counts[key{b.Auction, start + 10000}]++
			}
		}
		top := map[int64]int64{}
		for k, c := range counts {
			top[k.end] = max(top[k.end], c)
		}
		for k, c := range counts {
			if c == top[k.end] {
				out = append(out, HotAuction{k.auction, c, k.end})
			}
		}
	case "q7":
		top := map[int64]int64{}
		for b := range bids {
			w := b.DateTime - b.DateTime%10000
			if p, ok := top[w]; !ok || b.Price > p {
				top[w] = b.Price
			}
		}
		for b := range bids {
			if b.Price == top[b.DateTime-b.DateTime%10000] {
				out = append(out, b)
			}
		}
	case "q8":
		type key struct{ id, start int64 }
		sellers := map[key]bool{}
		for _, e := range events {
			if a := e.Auction; e.Type == AuctionEvent {
				sellers[key{a.Seller, a.DateTime - a.DateTime%10000}] = true
			}
		}
		for _, e := range events {
			if p := e.Person; e.Type == PersonEvent && sellers[key{p.ID, p.DateTime - p.DateTime%10000}] {
				out = append(out, NewUser{p.ID, p.Name, p.DateTime - p.DateTime%10000})
			}
		}
	default:
		return nil, fmt.Errorf("no query %q: the queries are %v", q, Queries)
	}
	lines := make([]string, len(out))
	for i, v := range out {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		lines[i] = string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	slices.Sort(lines)
	return lines, nil
}
