// Package nexmark is the Nexmark benchmark on pipegen: an event generator
// as published (Apache Beam's NexmarkGenerator and its Flink port in
// github.com/nexmark/nexmark), the queries q0-q5, q7 and q8 as pipelines
// (queries/*.yaml) with the functions they name, a plain reference of each
// query that the tests compare the pipelines with, and hand-written
// single-goroutine programs doing the same work (package hand), which
// `make bench` compares pipegen with (README.md in this folder).
//
// The model is the published one: an online auction with people, the
// auctions they open and the bids they make. One stream carries all three
// kinds as Event, as Flink's datagen table does (event_type 0, 1, 2); a
// query picks the kinds it reads.
package nexmark

// The kinds of events, as Flink's Nexmark source numbers them.
const (
	PersonEvent  = 0
	AuctionEvent = 1
	BidEvent     = 2
)

// Event is one event of the stream: a person, an auction or a bid, by
// Type. The other two are nil or zero, and left out of its JSON. A bid,
// 92% of the events, is held in the event; a person or an auction by
// pointer, so that an event is 72 bytes to copy, not 272.
type Event struct {
	Type    int      `json:"event_type"`
	Person  *Person  `json:"person,omitempty"`
	Auction *Auction `json:"auction,omitempty"`
	Bid     Bid      `json:"bid,omitzero"`
}

// Person is a person who registers, to sell or to bid. Times are Unix
// milliseconds of event time.
type Person struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	EmailAddress string `json:"emailAddress"`
	CreditCard   string `json:"creditCard"`
	City         string `json:"city"`
	State        string `json:"state"`
	DateTime     int64  `json:"dateTime"`
	Extra        string `json:"extra"`
}

// Auction is an item put up for auction by a seller, open from DateTime
// until Expires.
type Auction struct {
	ID          int64  `json:"id"`
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	DateTime    int64  `json:"dateTime"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
}

// Bid is a bid of a bidder on an auction, in cents.
type Bid struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime int64  `json:"dateTime"`
	Extra    string `json:"extra"`
}

// Time is the event time of an event: its person's, auction's or bid's
// DateTime.
func (e Event) Time() int64 {
	switch e.Type {
	case PersonEvent:
		return e.Person.DateTime
	case AuctionEvent:
		return e.Auction.DateTime
	}
	return e.Bid.DateTime
}
