package nexmark

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// The generator follows the published one (Beam's NexmarkGenerator,
// GeneratorConfig and model/*Generator, as ported to Flink in
// github.com/nexmark/nexmark), with its defaults:
//
//   - event n (from 0) is a person when n%50 is 0, an auction when it is 1
//     to 3, a bid otherwise: people, auctions and bids 1:3:46;
//   - people and auctions are numbered from 1000 in the order they are
//     made; categories from 10 (5 of them);
//   - a bid is for a hot auction (the first of the newest batch of 100)
//     with probability 1/2, else for one of the 100 newest auctions or the
//     10 after them; by a hot bidder (the second of the newest 100 people)
//     with probability 3/4, else one of the 1000 newest people or the 10
//     after them; an auction's seller is the hot seller (the first of the
//     newest 100 people) with probability 3/4, else as for a bidder;
//   - prices are 10^(6u) dollars in cents for a uniform u; an auction
//     lasts 1 ms to twice the time it takes to open 100 more auctions;
//   - names, descriptions and extras have the published lengths and
//     average sizes (people 200 bytes, auctions 500, bids 100);
//   - event n happens at base + n times the inter-event delay (1/Rate s).
//
// What differs: every random draw of event n comes from a generator seeded
// with (Seed, n), as in Beam (the Flink port draws from one unseeded
// java.util.Random), so that event n is the same whichever subtask makes it
// and a run is deterministic for a seed; and random text is cut from a
// block of random letters made once per seed instead of drawn letter by
// letter, so that making a bid allocates nothing.

// The published proportions, ratios and sizes.
const (
	personProportion  = 1
	auctionProportion = 3
	bidProportion     = 46
	totalProportion   = personProportion + auctionProportion + bidProportion

	firstPersonID   = 1000
	firstAuctionID  = 1000
	firstCategoryID = 10
	numCategories   = 5

	hotAuctionRatio = 2 // a bid is for a hot auction 1 - 1/2 of the time
	hotSellersRatio = 4
	hotBiddersRatio = 4
	hotBatch        = 100 // HOT_AUCTION_RATIO, HOT_SELLER_RATIO, HOT_BIDDER_RATIO

	numActivePeople     = 1000
	numInFlightAuctions = 100
	personIDLead        = 10
	auctionIDLead       = 10

	avgPersonByteSize  = 200
	avgAuctionByteSize = 500
	avgBidByteSize     = 100
)

// BaseTime is the event time of event 0, in Unix milliseconds: Beam's
// fixed base time (2015-07-15T00:00:00Z), so that runs are repeatable.
const BaseTime = 1436918400000

// Config says which events to make.
type Config struct {
	// Events is the number of events.
	Events uint64
	// Rate is the number of events per second of event time: the inverse
	// of the inter-event delay. The published benchmark runs at 10
	// million (nexmark.yaml: nexmark.workload.suite.100m.tps).
	Rate uint64
	// Seed picks the random draws.
	Seed uint64
}

// DefaultRate is the published benchmark's event rate.
const DefaultRate = 10_000_000

// ConfigFromEnv reads the configuration of the pipelines' generator from
// the environment: NEXMARK_EVENTS (default 100000), NEXMARK_RATE (default
// 10000000) and NEXMARK_SEED (default 1).
func ConfigFromEnv() Config {
	c := Config{Events: 100_000, Rate: DefaultRate, Seed: 1}
	env := func(name string, v *uint64) {
		if s := os.Getenv(name); s != "" {
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				*v = n
			}
		}
	}
	env("NEXMARK_EVENTS", &c.Events)
	env("NEXMARK_RATE", &c.Rate)
	env("NEXMARK_SEED", &c.Seed)
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	return c
}

// Generator makes the events of a Config. Event n is a function of the
// configuration and n alone: Event may be called for any n, in any order,
// from any number of goroutines.
type Generator struct {
	cfg Config
	// letters and words are blocks of random text that strings are cut
	// from: letters a-z, and words (letters with a space one time in 13).
	letters, words string
	// names are every first name followed by every last name.
	names []string
}

const textBlock = 1 << 16

var (
	firstNames = strings.Split("Peter,Paul,Luke,John,Saul,Vicky,Kate,Julie,Sarah,Deiter,Walter", ",")
	lastNames  = strings.Split("Shultz,Abrams,Spencer,White,Bartels,Walton,Smith,Jones,Noris", ",")
	usStates   = strings.Split("AZ,CA,ID,OR,WA,WY", ",")
	usCities   = strings.Split("Phoenix,Los Angeles,San Francisco,Boise,Portland,Bend,Redmond,Seattle,Kent,Cheyenne", ",")
)

// NewGenerator makes the generator of cfg.
func NewGenerator(cfg Config) *Generator {
	if cfg.Rate == 0 {
		cfg.Rate = DefaultRate
	}
	g := &Generator{cfg: cfg}
	r := newRand(cfg.Seed, math.MaxUint64)
	letters := make([]byte, textBlock)
	words := make([]byte, textBlock)
	for i := range letters {
		letters[i] = byte('a' + r.intn(26))
		if r.intn(13) == 0 {
			words[i] = ' '
		} else {
			words[i] = byte('a' + r.intn(26))
		}
	}
	g.letters, g.words = string(letters), string(words)
	for _, f := range firstNames {
		for _, l := range lastNames {
			g.names = append(g.names, f+" "+l)
		}
	}
	return g
}

// Config returns the generator's configuration.
func (g *Generator) Config() Config { return g.cfg }

// Timestamp is the event time of event n.
func (g *Generator) Timestamp(n uint64) int64 {
	return BaseTime + int64(n*1_000_000/g.cfg.Rate)/1000
}

// Event returns event n.
func (g *Generator) Event(n uint64) Event {
	var e Event
	g.EventInto(n, &e)
	return e
}

// EventInto writes event n into e, which holds the zero Event.
//
// A bid's fields are made as scalars and stored once, where they are kept:
// a Bid made in a variable and returned is copied 16 bytes at a time from
// the 8-byte stores that made it, a load that waits until those stores
// have left the store buffer (store forwarding fails), and then until
// every store before them has too: 10% of the generator's CPU, and at
// parallelism 2, behind stores that wait for the other core, twice the
// samples in bid (examples/nexmark/README.md).
func (g *Generator) EventInto(n uint64, e *Event) {
	r := newRand(g.cfg.Seed, n)
	ts := g.Timestamp(n)
	switch rem := n % totalProportion; {
	case rem < personProportion:
		p := g.person(n, &r, ts)
		e.Type, e.Person = PersonEvent, &p
	case rem < personProportion+auctionProportion:
		a := g.auction(n, &r, ts)
		e.Type, e.Auction = AuctionEvent, &a
	default:
		e.Type = BidEvent
		e.Bid.Auction, e.Bid.Bidder, e.Bid.Price, e.Bid.Extra = g.bid(n, &r)
		e.Bid.DateTime = ts
	}
}

func (g *Generator) person(n uint64, r *rand, ts int64) Person {
	p := Person{ID: lastBase0PersonID(n) + firstPersonID, DateTime: ts}
	p.Name = g.names[r.intn(int64(len(firstNames)))*int64(len(lastNames))+r.intn(int64(len(lastNames)))]
	p.EmailAddress = g.nextString(r, 7) + "@" + g.nextString(r, 5) + ".com"
	var cc [19]byte
	for i := range 4 {
		d := r.intn(10000)
		at := i * 5
		if i > 0 {
			cc[at-1] = ' '
		}
		cc[at], cc[at+1], cc[at+2], cc[at+3] = byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10)
	}
	p.CreditCard = string(cc[:])
	p.City = usCities[r.intn(int64(len(usCities)))]
	p.State = usStates[r.intn(int64(len(usStates)))]
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = g.nextExtra(r, size, avgPersonByteSize)
	return p
}

func (g *Generator) auction(n uint64, r *rand, ts int64) Auction {
	a := Auction{ID: lastBase0AuctionID(n) + firstAuctionID, DateTime: ts}
	if r.intn(hotSellersRatio) > 0 {
		a.Seller = lastBase0PersonID(n) / hotBatch * hotBatch
	} else {
		a.Seller = nextBase0PersonID(n, r)
	}
	a.Seller += firstPersonID
	a.Category = firstCategoryID + r.intn(numCategories)
	a.InitialBid = nextPrice(r)
	a.Expires = ts + g.nextAuctionLength(n, r, ts)
	a.ItemName = g.nextString(r, 20)
	a.Description = g.nextString(r, 100)
	a.Reserve = a.InitialBid + nextPrice(r)
	size := 8 + len(a.ItemName) + len(a.Description) + 8 + 8 + 8 + 8 + 8
	a.Extra = g.nextExtra(r, size, avgAuctionByteSize)
	return a
}

// bid makes the fields of bid n but its time.
func (g *Generator) bid(n uint64, r *rand) (auction, bidder, price int64, extra string) {
	if r.intn(hotAuctionRatio) > 0 {
		auction = lastBase0AuctionID(n) / hotBatch * hotBatch
	} else {
		auction = nextBase0AuctionID(n, r)
	}
	if r.intn(hotBiddersRatio) > 0 {
		bidder = lastBase0PersonID(n)/hotBatch*hotBatch + 1
	} else {
		bidder = nextBase0PersonID(n, r)
	}
	price = nextPrice(r)
	extra = g.nextExtra(r, 8+8+8+8, avgBidByteSize)
	return auction + firstAuctionID, bidder + firstPersonID, price, extra
}

// lastBase0PersonID is the newest person (from 0) at event n: event n's
// own when it is a person.
func lastBase0PersonID(n uint64) int64 {
	epoch, offset := int64(n/totalProportion), int64(n%totalProportion)
	if offset >= personProportion {
		offset = personProportion - 1
	}
	return epoch*personProportion + offset
}

// nextBase0PersonID picks one of the active people, or one a little ahead.
func nextBase0PersonID(n uint64, r *rand) int64 {
	people := lastBase0PersonID(n) + 1
	active := min(people, numActivePeople)
	return people - active + r.intn(active+personIDLead)
}

// lastBase0AuctionID is the newest auction (from 0) at event n: event n's
// own when it is an auction.
func lastBase0AuctionID(n uint64) int64 {
	epoch, offset := int64(n/totalProportion), int64(n%totalProportion)
	switch {
	case offset < personProportion:
		epoch--
		offset = auctionProportion - 1
	case offset >= personProportion+auctionProportion:
		offset = auctionProportion - 1
	default:
		offset -= personProportion
	}
	return epoch*auctionProportion + offset
}

// nextBase0AuctionID picks one of the auctions likely still open, or one a
// little ahead.
func nextBase0AuctionID(n uint64, r *rand) int64 {
	last := lastBase0AuctionID(n)
	low := max(last-numInFlightAuctions, 0)
	return low + r.intn(last-low+1+auctionIDLead)
}

// nextAuctionLength is how long an auction opened at event n stays open:
// on average the time it takes to open numInFlightAuctions more.
func (g *Generator) nextAuctionLength(n uint64, r *rand, ts int64) int64 {
	ahead := uint64(numInFlightAuctions * totalProportion / auctionProportion)
	horizon := g.Timestamp(n+ahead) - ts
	return 1 + r.intn(max(horizon*2, 1))
}

// nextPrice is 10^(6u) dollars in cents, u uniform in [0, 1): e^(6u ln 10),
// which math.Pow(10, x) is too, at twice the cost.
func nextPrice(r *rand) int64 {
	return int64(math.Round(math.Exp(r.float()*(6*math.Ln10)) * 100))
}

// nextString is random text of 3 to max-1 characters with spaces, without
// spaces at either end.
func (g *Generator) nextString(r *rand, max int64) string {
	n := 3 + r.intn(max-3)
	at := r.intn(textBlock - n)
	return strings.Trim(g.words[at:at+n], " ")
}

// nextExtra is random letters that bring an event of size bytes to avg on
// average.
func (g *Generator) nextExtra(r *rand, size, avg int) string {
	if size > avg {
		return ""
	}
	avg -= size
	delta := int64(math.Round(float64(avg) * 0.2))
	n := int64(avg) - delta
	if delta != 0 {
		n += r.intn(2 * delta)
	}
	at := r.intn(textBlock - n)
	return g.letters[at : at+n]
}

// rand is SplitMix64, seeded per event.
type rand struct{ s uint64 }

func newRand(seed, n uint64) rand {
	return rand{s: mix(seed*0x9e3779b97f4a7c15 ^ mix(n+0x632be59bd9b4e019))}
}

func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *rand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix(r.s)
}

// intn is uniform in [0, n), for 0 < n < 2^32.
func (r *rand) intn(n int64) int64 {
	return int64((r.next() >> 32) * uint64(n) >> 32)
}

// float is uniform in [0, 1).
func (r *rand) float() float64 {
	return float64(r.next()>>11) / (1 << 53)
}

// events is the generator of the pipelines, configured by ConfigFromEnv.
var events = NewGenerator(ConfigFromEnv())

// NextEvent is the pipelines' generator source: event seq of the
// configuration in the environment (ConfigFromEnv), written into e, a
// zero Event (docs/dsl.md, Records by pointer).
func NextEvent(seq uint64, e *Event) bool {
	if seq >= events.cfg.Events {
		return false
	}
	events.EventInto(seq, e)
	return true
}

// EventTime is the event time of an event, for the sources' timestamps:
// Event.Time read through the pointer (calling Time, whose receiver is a
// value, would copy the event, which the pointer is there to spare).
func EventTime(e *Event) int64 {
	switch e.Type {
	case PersonEvent:
		return e.Person.DateTime
	case AuctionEvent:
		return e.Auction.DateTime
	}
	return e.Bid.DateTime
}
