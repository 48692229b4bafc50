package nexmark

import (
	"math"
	"time"

	"github.com/pipegen/pipegen"
)

// The functions the pipelines of queries/ name. Each query's comment says
// what it computes, after the published definition (the Flink SQL of
// github.com/nexmark/nexmark, nexmark-flink/src/main/resources/queries),
// and where pipegen's form differs.
//
// The functions whose input is a struct Go keeps in memory (an Event, 72
// bytes, a Bid, a SellerEvent, an AuctionOrBid) take it by pointer, as
// the hand-written programs do (b := &e.Bid): by value, Go copies it
// into each call right after it was stored, which stalls on store
// forwarding (docs/dsl.md, Records by pointer). They only read it.

// Bids emits the bids of the stream: the view "bid" of the published
// queries.
func Bids(e *Event, emit func(Bid)) {
	if e.Type == BidEvent {
		emit(e.Bid)
	}
}

// q0, pass-through: every bid as it is (Bids, to the sink).

// q1, currency conversion: every bid with its price in euros.

// EuroBid is a bid with its price converted to euros.
type EuroBid struct {
	Auction  int64   `json:"auction"`
	Bidder   int64   `json:"bidder"`
	Price    float64 `json:"price"`
	DateTime int64   `json:"dateTime"`
	Extra    string  `json:"extra"`
}

// ToEuro converts a bid's price from dollars to euros: 0.908 * price, to
// three decimals, as the published q1 (DECIMAL(23, 3)).
func ToEuro(b *Bid) EuroBid {
	return EuroBid{Auction: b.Auction, Bidder: b.Bidder, Price: float64(b.Price*908) / 1000, DateTime: b.DateTime, Extra: b.Extra}
}

// q2, selection: the auction and price of the bids on every 123rd auction.

// AuctionPrice is an auction and a price.
type AuctionPrice struct {
	Auction int64 `json:"auction"`
	Price   int64 `json:"price"`
}

// Every123rd keeps the bids on auctions whose id is a multiple of 123.
func Every123rd(b *Bid) bool { return b.Auction%123 == 0 }

// ToAuctionPrice keeps a bid's auction and price.
func ToAuctionPrice(b *Bid) AuctionPrice { return AuctionPrice{Auction: b.Auction, Price: b.Price} }

// q3, local item suggestion: who sells in Oregon, Idaho or California in
// category 10, and which auctions. The published q3 is a regular (not
// windowed) inner join of auctions and people; pipegen's joins are
// windowed or bounded by time, so q3 is a process operator keyed by the
// person: it keeps the person once seen and the auctions that came before
// it, and emits a pair as soon as both are there, as the SQL join does.

// LocalItem is a seller and one of its auctions.
type LocalItem struct {
	Name    string `json:"name"`
	City    string `json:"city"`
	State   string `json:"state"`
	Auction int64  `json:"id"`
}

// SellerEvent is what q3 needs of a person or an auction: the person,
// and the auction (0 for a person) or the person's name and place.
type SellerEvent struct {
	Person            int64
	Auction           int64
	Name, City, State string
}

// Q3Input keeps the auctions of category 10 and the people of OR, ID and
// CA, and of each what q3 needs: only that crosses to the keyed operator.
func Q3Input(e *Event, emit func(SellerEvent)) {
	switch e.Type {
	case AuctionEvent:
		if e.Auction.Category == 10 {
			emit(SellerEvent{Person: e.Auction.Seller, Auction: e.Auction.ID})
		}
	case PersonEvent:
		if p := e.Person; p.State == "OR" || p.State == "ID" || p.State == "CA" {
			emit(SellerEvent{Person: p.ID, Name: p.Name, City: p.City, State: p.State})
		}
	}
}

// Q3Key is the person an event is about: the person, or the seller.
func Q3Key(e *SellerEvent) int64 { return e.Person }

// Seller is what q3 keeps of a person: its name and place once it is
// known, and its auctions until then.
type Seller struct {
	Known   bool
	Name    string
	City    string
	State   string
	Pending []int64
}

// JoinSeller pairs a seller with its auctions.
func JoinSeller(id int64, s *Seller, e *SellerEvent, _ pipegen.Context, emit func(LocalItem)) {
	if e.Auction == 0 {
		s.Known, s.Name, s.City, s.State = true, e.Name, e.City, e.State
		for _, a := range s.Pending {
			emit(LocalItem{Name: s.Name, City: s.City, State: s.State, Auction: a})
		}
		s.Pending = nil
		return
	}
	if s.Known {
		emit(LocalItem{Name: s.Name, City: s.City, State: s.State, Auction: e.Auction})
		return
	}
	s.Pending = append(s.Pending, e.Auction)
}

// q4, average closing price per category: an auction's closing price is
// its highest bid made between its opening and its expiry (both
// included); q4 averages them per category (integer average, as Flink's
// AVG of BIGINT). The published q4 is a regular join of auctions and bids
// with a time condition, grouped twice; here a process operator keyed by
// the auction keeps its highest bid and, when the watermark passes the
// auction's expiry (an event-time timer), emits its closing price, then
// forgets the auction; an aggregate per category averages them, emitting
// one result per category at the end of the input (the SQL's result once
// its input has ended).

// AuctionOrBid is what q4 needs of an auction or a bid on it.
type AuctionOrBid struct {
	Auction  int64
	IsBid    bool
	Price    int64 // a bid's
	DateTime int64
	Expires  int64 // an auction's
	Category int64 // an auction's
}

// Q4Input keeps auctions and bids, and of each what q4 needs: only that
// crosses to the keyed operator.
func Q4Input(e *Event, emit func(AuctionOrBid)) {
	switch e.Type {
	case AuctionEvent:
		a := e.Auction
		emit(AuctionOrBid{Auction: a.ID, DateTime: a.DateTime, Expires: a.Expires, Category: a.Category})
	case BidEvent:
		b := &e.Bid
		emit(AuctionOrBid{Auction: b.Auction, IsBid: true, Price: b.Price, DateTime: b.DateTime})
	}
}

// Q4Key is the auction an event is about.
func Q4Key(e *AuctionOrBid) int64 { return e.Auction }

// Closing is what q4 keeps of an auction until it closes.
type Closing struct {
	Open     bool
	Category int64
	DateTime int64
	Expires  int64
	Max      int64
	HasBid   bool
	// Early are bids that came before their auction (from another
	// source subtask); each is dropped once the watermark passes it.
	Early []EarlyBid
}

// EarlyBid is a bid that came before its auction.
type EarlyBid struct {
	Price    int64
	DateTime int64
}

// ClosingPrice is an auction's category and closing price.
type ClosingPrice struct {
	Auction  int64 `json:"auction"`
	Category int64 `json:"category"`
	Price    int64 `json:"price"`
}

func (c *Closing) offer(price, at int64) {
	if at >= c.DateTime && at <= c.Expires && (!c.HasBid || price > c.Max) {
		c.Max, c.HasBid = price, true
	}
}

// TrackAuction follows an auction's bids.
func TrackAuction(id int64, c *Closing, e *AuctionOrBid, ctx pipegen.Context, _ func(ClosingPrice)) {
	if !e.IsBid {
		c.Open, c.Category, c.DateTime, c.Expires = true, e.Category, e.DateTime, e.Expires
		for _, b := range c.Early {
			c.offer(b.Price, b.DateTime)
		}
		c.Early = nil
		ctx.TimerAt(time.UnixMilli(c.Expires))
		return
	}
	if c.Open {
		c.offer(e.Price, e.DateTime)
		return
	}
	// One timer per auction that has early bids, not one per bid: at p=2
	// a bid often comes before its auction (the two come from different
	// source subtasks, one ahead of the other), and a timer costs a map
	// entry and a heap slot.
	if len(c.Early) == 0 {
		ctx.TimerAt(time.UnixMilli(e.DateTime))
	}
	c.Early = append(c.Early, EarlyBid{Price: e.Price, DateTime: e.DateTime})
}

// CloseAuction emits an auction's closing price when it expires, and
// drops bids that no auction claimed.
func CloseAuction(id int64, c *Closing, at time.Time, ctx pipegen.Context, emit func(ClosingPrice)) {
	t := at.UnixMilli()
	if c.Open {
		if t >= c.Expires {
			if c.HasBid {
				emit(ClosingPrice{Auction: id, Category: c.Category, Price: c.Max})
			}
			ctx.Clear()
		}
		return
	}
	keep := c.Early[:0]
	next := int64(math.MaxInt64)
	for _, b := range c.Early {
		if b.DateTime > t {
			keep = append(keep, b)
			next = min(next, b.DateTime)
		}
	}
	c.Early = keep
	if len(keep) == 0 {
		ctx.Clear()
		return
	}
	ctx.TimerAt(time.UnixMilli(next)) // the next early bid to drop
}

// ClosingCategory keys a closing price by its category.
func ClosingCategory(c ClosingPrice) int64 { return c.Category }

// PriceSum sums the closing prices of a category.
type PriceSum struct {
	Sum, N int64
}

// AddClosing adds a closing price.
func AddClosing(s *PriceSum, c ClosingPrice) { s.Sum += c.Price; s.N++ }

// CategoryPrice is the average closing price of a category.
type CategoryPrice struct {
	Category int64 `json:"id"`
	Average  int64 `json:"final"`
}

// AveragePrice makes a category's result.
func AveragePrice(category int64, s *PriceSum) CategoryPrice {
	return CategoryPrice{Category: category, Average: s.Sum / s.N}
}

// q5, hot items: the auctions with the most bids in each sliding window
// of 10 seconds every 2 seconds (every auction that ties). As published:
// a count per auction and window, then per window the highest count and
// the auctions that reach it.

// AuctionBid is what q5 needs of a bid: its auction (its time is the
// record's event time). Its counts take these instead of whole bids: at
// parallelism > 1 they cross a hash edge, 8 bytes a bid instead of the
// bid's 80, as a SQL engine's projection would send; at 1 the flatmap
// copies less.
type AuctionBid struct{ Auction int64 }

// AuctionBids emits the auction of every bid.
func AuctionBids(e *Event, emit func(AuctionBid)) {
	if e.Type == BidEvent {
		emit(AuctionBid{Auction: e.Bid.Auction})
	}
}

// BidAuction keys a bid by its auction.
func BidAuction(b *AuctionBid) int64 { return b.Auction }

// Count counts records.
type Count struct{ N int64 }

// CountBid counts a bid.
func CountBid(c *Count, _ *AuctionBid) { c.N++ }

// CountEvent counts an event. The crash test's count of bids per bucket
// (crash/bidcounts.yaml) takes it behind the filter IsBid: where q7 keeps
// the highest bids, which a bid lost or counted twice seldom changes,
// every bid changes a count.
func CountEvent(c *Count, _ *Event) { c.N++ }

// MergeCounts adds the count of src to dst: with it q5's sliding windows
// are kept in slices of 2 s, each bid counted once, and a window's count
// is the sum of its five slices'.
func MergeCounts(dst, src *Count) { dst.N += src.N }

// AuctionCount is the number of bids of an auction in a window.
type AuctionCount struct {
	Auction int64 `json:"auction"`
	Num     int64 `json:"num"`
	End     int64 `json:"-"`
}

// CountOf makes an auction's count in a window.
func CountOf(auction int64, w pipegen.Window, c *Count) AuctionCount {
	return AuctionCount{Auction: auction, Num: c.N, End: w.End.UnixMilli()}
}

// WindowEnd keys a count by its window.
func WindowEnd(c AuctionCount) int64 { return c.End }

// Hottest is the highest count of a window so far and the auctions that
// have it.
type Hottest struct {
	Num      int64
	Auctions []int64
}

// AddHot takes one auction's count into its window's highest.
func AddHot(h *Hottest, c AuctionCount) {
	switch {
	case c.Num > h.Num:
		h.Num, h.Auctions = c.Num, append(h.Auctions[:0], c.Auction)
	case c.Num == h.Num:
		h.Auctions = append(h.Auctions, c.Auction)
	}
}

// MergeHot merges src, the hottest auctions of a window among the counts
// that one subtask of counts made, into dst: at parallelism > 1 each
// subtask combines its counts of a window before they cross to the
// window's subtask of hottest, one partial a window instead of a count
// per auction (the highest of the highest counts is the highest).
func MergeHot(dst, src *Hottest) { mergeTied(&dst.Num, &dst.Auctions, src.Num, src.Auctions) }

// mergeTied merges src, items tied at the value srcTop, into dst, items
// tied at *dstTop: the higher value's items, or both's on a tie.
func mergeTied[T any](dstTop *int64, dst *[]T, srcTop int64, src []T) {
	switch {
	case len(src) == 0:
	case len(*dst) == 0 || srcTop > *dstTop:
		*dstTop, *dst = srcTop, append((*dst)[:0], src...)
	case srcTop == *dstTop:
		*dst = append(*dst, src...)
	}
}

// HotItems is a window's hottest auctions.
type HotItems struct {
	End      int64
	Num      int64
	Auctions []int64
}

// HotOf makes a window's result.
func HotOf(end int64, h *Hottest) HotItems {
	return HotItems{End: end, Num: h.Num, Auctions: h.Auctions}
}

// HotAuction is one of the hottest auctions of the window that ends at
// End.
type HotAuction struct {
	Auction int64 `json:"auction"`
	Num     int64 `json:"num"`
	End     int64 `json:"endtime"`
}

// HotRows emits one row per hot auction.
func HotRows(h HotItems, emit func(HotAuction)) {
	for _, a := range h.Auctions {
		emit(HotAuction{Auction: a, Num: h.Num, End: h.End})
	}
}

// q7, highest bid: the bids with the highest price of each tumbling window
// of 10 seconds. The published q7 joins the bids with each window's
// maximum; here the windows keep the highest bids themselves, in two
// steps so that the work spreads over subtasks: per window and bucket of
// auctions (auction id modulo 64), then per window.

// Highest is the highest price of a window so far and the bids with it.
type Highest struct {
	Price int64
	Bids  []Bid
}

// BidBucket spreads the bids over 64 buckets.
func BidBucket(b *Bid) int64 { return b.Auction % 64 }

// IsBid keeps the bids of the stream, which stay in their events: q7's
// windows read each bid through a pointer to its event, where Bids would
// copy it out (48 bytes a bid, right after the generator wrote it: q7
// took 0.972 of the CPU without that copy, 9 pairs of 20M events).
func IsBid(e *Event) bool { return e.Type == BidEvent }

// EventBucket is BidBucket of an event's bid.
func EventBucket(e *Event) int64 { return BidBucket(&e.Bid) }

// AddHighestOfEvent takes an event's bid into its window's highest.
func AddHighestOfEvent(h *Highest, e *Event) { AddHighest(h, &e.Bid) }

// AddHighest takes a bid into its window's highest.
func AddHighest(h *Highest, b *Bid) {
	switch {
	case len(h.Bids) == 0 || b.Price > h.Price:
		h.Price, h.Bids = b.Price, append(h.Bids[:0], *b)
	case b.Price == h.Price:
		h.Bids = append(h.Bids, *b)
	}
}

// MergeHighestBids merges src, the highest bids of a window of a bucket
// that one subtask saw, into dst (q7 at parallelism > 1 combines the bids
// before they cross to the bucket's subtask): the highest of the highest
// bids is the highest.
func MergeHighestBids(dst, src *Highest) { mergeTied(&dst.Price, &dst.Bids, src.Price, src.Bids) }

// WindowHighest is a bucket's highest bids in a window.
type WindowHighest struct {
	End   int64
	Price int64
	Bids  []Bid
}

// HighestOf makes a bucket's result.
func HighestOf(_ int64, w pipegen.Window, h *Highest) WindowHighest {
	return WindowHighest{End: w.End.UnixMilli(), Price: h.Price, Bids: h.Bids}
}

// HighestEnd keys the buckets' results by their window.
func HighestEnd(h WindowHighest) int64 { return h.End }

// MergeHighest takes a bucket's highest into its window's.
func MergeHighest(h *Highest, w WindowHighest) { mergeTied(&h.Price, &h.Bids, w.Price, w.Bids) }

// AllHighest is a window's highest bids.
func AllHighest(_ int64, h *Highest) Highest { return *h }

// HighestRows emits the highest bids.
func HighestRows(h Highest, emit func(Bid)) {
	for _, b := range h.Bids {
		emit(b)
	}
}

// q8, monitor new users: the people who opened an auction in the tumbling
// window of 10 seconds in which they registered. As published: the
// sellers of each window (one per seller and window), joined with the
// people of the same window.

// PersonName is what q8 needs of a person.
type PersonName struct {
	ID   int64
	Name string
}

// People emits the people of the stream, as much of each as q8 needs.
func People(e *Event, emit func(PersonName)) {
	if e.Type == PersonEvent {
		emit(PersonName{ID: e.Person.ID, Name: e.Person.Name})
	}
}

// Sellers emits the seller of each auction of the stream.
func Sellers(e *Event, emit func(int64)) {
	if e.Type == AuctionEvent {
		emit(e.Auction.Seller)
	}
}

// PersonID keys a person.
func PersonID(p PersonName) int64 { return p.ID }

// SellerKey keys a seller by itself.
func SellerKey(seller int64) int64 { return seller }

// SellerID keys a window's seller.
func SellerID(s WindowSeller) int64 { return s.Seller }

// WindowSeller is a seller who opened an auction in a window.
type WindowSeller struct {
	Seller int64
	Start  int64
}

// SeenSeller counts a seller's auction in a window.
func SeenSeller(c *Count, _ int64) { c.N++ }

// SellerOf makes the window's seller.
func SellerOf(seller int64, w pipegen.Window, _ *Count) WindowSeller {
	return WindowSeller{Seller: seller, Start: w.Start.UnixMilli()}
}

// NewUser is a person who registered and opened an auction in one window.
type NewUser struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	StartTime int64  `json:"starttime"`
}

// JoinNewUser pairs a person with its window as a seller.
func JoinNewUser(p PersonName, s WindowSeller) NewUser {
	return NewUser{ID: p.ID, Name: p.Name, StartTime: s.Start}
}
