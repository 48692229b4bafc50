// Package hand holds the Nexmark queries written by hand: for each, one
// single-goroutine Go program that does the same work as the query's
// pipeline (the same events, the same algorithm, the same output, as JSON
// lines), the way a Go programmer would write it for speed without an
// engine. `make bench` measures pipegen against these.
//
// Events come in order of their time (the generator's, or a JSON lines
// file's written in that order), so where the pipeline waits for the
// watermark, a program here acts when the next event's time passes.
package hand

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/pipegen/pipegen/examples/nexmark"
)

// Next writes the next event into e, the zero Event, and reports whether
// there was one. A query keeps one Event for the whole loop and zeroes it
// after each: as next is a function value, the Event moves to the heap,
// which a variable made in every iteration would do at every event.
type Next func(e *nexmark.Event) bool

// Generated reads the events of g. Each is written where the program
// keeps it (Generator.EventInto): returned by value, the event would be
// stored and then copied, a copy that stalls on store forwarding.
func Generated(g *nexmark.Generator) Next {
	var n uint64
	end := g.Config().Events
	return func(e *nexmark.Event) bool {
		if n == end {
			return false
		}
		g.EventInto(n, e)
		n++
		return true
	}
}

// JSONLines reads events from JSON lines with encoding/json, as a Go
// programmer would. A bad line panics.
func JSONLines(r io.Reader) Next {
	br := bufio.NewReaderSize(r, 256<<10)
	return func(e *nexmark.Event) bool {
		for {
			line, err := br.ReadSlice('\n')
			if len(line) == 0 && err != nil {
				if err != io.EOF {
					panic(err)
				}
				return false
			}
			if len(line) <= 1 {
				continue
			}
			if err := json.Unmarshal(line, e); err != nil {
				panic(fmt.Sprintf("bad event %q: %v", line, err))
			}
			return true
		}
	}
}

// writer collects output lines and writes them in blocks.
type writer struct {
	w   io.Writer
	buf []byte
	err error
}

func (w *writer) check() {
	if len(w.buf) >= 64<<10 {
		w.flush()
	}
}

func (w *writer) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
}

// Queries are the queries Run knows: those of the pipelines, and "gen",
// the generator alone (it prints a checksum of the events).
var Queries = append([]string{"gen"}, nexmark.Queries...)

// Run runs query q over the events of next and writes its output to w.
func Run(q string, next Next, w io.Writer) error {
	out := &writer{w: w, buf: make([]byte, 0, 80<<10)}
	switch q {
	case "gen":
		gen(next, out)
	case "q0":
		q0(next, out)
	case "q1":
		q1(next, out)
	case "q2":
		q2(next, out)
	case "q3":
		q3(next, out)
	case "q4":
		q4(next, out)
	case "q5":
		q5(next, out)
	case "q7":
		q7(next, out)
	case "q8":
		q8(next, out)
	default:
		return fmt.Errorf("no query %q: the queries are %v", q, Queries)
	}
	out.flush()
	return out.err
}

func gen(next Next, out *writer) {
	var sum int64
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		switch e.Type {
		case nexmark.PersonEvent:
			sum += e.Person.ID
		case nexmark.AuctionEvent:
			sum += e.Auction.Reserve
		default:
			sum += e.Bid.Price
		}
	}
	out.buf = fmt.Appendf(out.buf, "%d\n", sum)
}

func q0(next Next, out *writer) {
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		if e.Type == nexmark.BidEvent {
			out.buf = appendBid(out.buf, &e.Bid)
			out.check()
		}
	}
}

func q1(next Next, out *writer) {
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		if b := &e.Bid; e.Type == nexmark.BidEvent {
			x := nexmark.EuroBid{Auction: b.Auction, Bidder: b.Bidder, Price: float64(b.Price*908) / 1000, DateTime: b.DateTime, Extra: b.Extra}
			out.buf = appendEuroBid(out.buf, &x)
			out.check()
		}
	}
}

func q2(next Next, out *writer) {
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		if b := &e.Bid; e.Type == nexmark.BidEvent && b.Auction%123 == 0 {
			out.buf = appendAuctionPrice(out.buf, b.Auction, b.Price)
			out.check()
		}
	}
}

func q3(next Next, out *writer) {
	type seller struct {
		known             bool
		name, city, state string
		pending           []int64
	}
	sellers := map[int64]*seller{}
	get := func(id int64) *seller {
		s := sellers[id]
		if s == nil {
			s = &seller{}
			sellers[id] = s
		}
		return s
	}
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		switch e.Type {
		case nexmark.PersonEvent:
			p := e.Person
			if p.State != "OR" && p.State != "ID" && p.State != "CA" {
				continue
			}
			s := get(p.ID)
			s.known, s.name, s.city, s.state = true, p.Name, p.City, p.State
			for _, a := range s.pending {
				out.buf = appendLocalItem(out.buf, s.name, s.city, s.state, a)
			}
			s.pending = nil
		case nexmark.AuctionEvent:
			a := e.Auction
			if a.Category != 10 {
				continue
			}
			if s := get(a.Seller); s.known {
				out.buf = appendLocalItem(out.buf, s.name, s.city, s.state, a.ID)
			} else {
				s.pending = append(s.pending, a.ID)
			}
		default:
			continue
		}
		out.check()
	}
}

// timer is an auction's timer: at its time, the auction closes (or bids
// that came before it are dropped).
type timer struct{ at, id int64 }

// timers is a binary min-heap of timers.
type timers []timer

func (h *timers) push(t timer) {
	*h = append(*h, t)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *timers) pop() timer {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(s) && s[l].at < s[small].at {
			small = l
		}
		if r := l + 1; r < len(s) && s[r].at < s[small].at {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}

func q4(next Next, out *writer) {
	type early struct{ price, at int64 }
	type closing struct {
		open                    bool
		category, from, expires int64
		max                     int64
		hasBid                  bool
		early                   []early
	}
	auctions := map[int64]*closing{}
	var due timers
	sum, n := map[int64]int64{}, map[int64]int64{}
	offer := func(c *closing, price, at int64) {
		if at >= c.from && at <= c.expires && (!c.hasBid || price > c.max) {
			c.max, c.hasBid = price, true
		}
	}
	fire := func(t timer) {
		c := auctions[t.id]
		switch {
		case c == nil:
		case c.open:
			if t.at >= c.expires {
				if c.hasBid {
					sum[c.category] += c.max
					n[c.category]++
				}
				delete(auctions, t.id)
			}
		default:
			keep := c.early[:0]
			for _, b := range c.early {
				if b.at > t.at {
					keep = append(keep, b)
				}
			}
			if c.early = keep; len(keep) == 0 {
				delete(auctions, t.id)
			}
		}
	}
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		if e.Type == nexmark.PersonEvent {
			continue
		}
		now := e.Time()
		for len(due) > 0 && due[0].at < now {
			fire(due.pop())
		}
		if a := e.Auction; e.Type == nexmark.AuctionEvent {
			c := auctions[a.ID]
			if c == nil {
				c = &closing{}
				auctions[a.ID] = c
			}
			c.open, c.category, c.from, c.expires = true, a.Category, a.DateTime, a.Expires
			for _, b := range c.early {
				offer(c, b.price, b.at)
			}
			c.early = nil
			due.push(timer{a.Expires, a.ID})
			continue
		}
		b := &e.Bid
		c := auctions[b.Auction]
		if c == nil {
			c = &closing{}
			auctions[b.Auction] = c
		}
		if c.open {
			offer(c, b.Price, b.DateTime)
			continue
		}
		c.early = append(c.early, early{b.Price, b.DateTime})
		due.push(timer{b.DateTime, b.Auction})
	}
	for len(due) > 0 {
		fire(due.pop())
	}
	for _, c := range slices.Sorted(mapKeys(sum)) {
		out.buf = appendCategoryPrice(out.buf, c, sum[c]/n[c])
	}
}

func mapKeys[V any](m map[int64]V) func(func(int64) bool) {
	return func(yield func(int64) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func q5(next Next, out *writer) {
	const size, slide = 10_000, 2_000
	type window struct {
		end    int64
		counts map[int64]int64
	}
	var open []window // by end
	fire := func(w window) {
		var top int64
		for _, c := range w.counts {
			top = max(top, c)
		}
		for a, c := range w.counts {
			if c == top {
				out.buf = appendHotAuction(out.buf, a, c, w.end)
			}
		}
		out.check()
	}
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		if e.Type != nexmark.BidEvent {
			continue
		}
		b := &e.Bid
		for len(open) > 0 && open[0].end <= b.DateTime {
			fire(open[0])
			open = open[1:]
		}
		// The windows of the bid end in (t, t+size], every slide.
		last := b.DateTime - b.DateTime%slide + size
		for end := last - size + slide; end <= last; end += slide {
			if len(open) == 0 || open[len(open)-1].end < end {
				open = append(open, window{end, map[int64]int64{}})
			}
		}
		for i := len(open) - size/slide; i < len(open); i++ {
			open[i].counts[b.Auction]++
		}
	}
	for _, w := range open {
		fire(w)
	}
}

func q7(next Next, out *writer) {
	const size = 10_000
	start := int64(-1)
	var price int64
	var top []nexmark.Bid
	fire := func() {
		for i := range top {
			out.buf = appendBid(out.buf, &top[i])
		}
		out.check()
		top = top[:0]
	}
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		if e.Type != nexmark.BidEvent {
			continue
		}
		b := &e.Bid
		if s := b.DateTime - b.DateTime%size; s != start {
			fire()
			start = s
		}
		switch {
		case len(top) == 0 || b.Price > price:
			price, top = b.Price, append(top[:0], *b)
		case b.Price == price:
			top = append(top, *b)
		}
	}
	fire()
}

func q8(next Next, out *writer) {
	const size = 10_000
	start := int64(-1)
	people := map[int64]string{}
	sellers := map[int64]bool{}
	fire := func() {
		for id, name := range people {
			if sellers[id] {
				out.buf = appendNewUser(out.buf, id, name, start)
			}
		}
		out.check()
		clear(people)
		clear(sellers)
	}
	var e nexmark.Event
	for ; next(&e); e = (nexmark.Event{}) {
		if e.Type == nexmark.BidEvent {
			continue
		}
		if s := e.Time() - e.Time()%size; s != start {
			fire()
			start = s
		}
		if e.Type == nexmark.PersonEvent {
			people[e.Person.ID] = e.Person.Name
		} else {
			sellers[e.Auction.Seller] = true
		}
	}
	fire()
}
