// Package orders is the golden case of user functions that take their
// input records by pointer: they read the record through the pointer,
// neither keep it nor change it.
package orders

import (
	"time"

	"github.com/pipegen/pipegen"
)

// Order is large enough (six fields) that Go keeps it in memory and
// copies it into a function that takes it by value.
type Order struct {
	ID    int64
	User  string
	Shop  int64
	Items int64
	Price int64
	Ms    int64
}

var users = []string{"ann", "bob", "cid", "dan", "eve"}

// Orders is the number of orders Next makes.
const Orders = 100

// Next makes order seq, 30 ms of event time after the one before, in o:
// a generator writes its record by pointer too. o is a zero Order at
// every call, so Next sets only the fields that are not zero (an order
// of no items leaves Items as it found it).
func Next(seq uint64, o *Order) bool {
	if seq >= Orders {
		return false
	}
	s := int64(seq)
	o.ID, o.User, o.Shop, o.Price, o.Ms = s, users[s%5], s%3, s*7%50, s*30
	if items := s % 4; items > 0 {
		o.Items = items
	}
	return true
}

func OrderTime(o *Order) int64 { return o.Ms }

// Line is one item of an order.
type Line struct {
	Order int64
	Shop  int64
	N     int64
	Price int64
	Ms    int64
}

// Lines splits an order into its items.
func Lines(o *Order, emit func(Line)) {
	for i := int64(0); i < o.Items; i++ {
		emit(Line{Order: o.ID, Shop: o.Shop, N: i, Price: o.Price + i, Ms: o.Ms})
	}
}

func Priced(l *Line) bool { return l.Price%2 == 0 }

// Taxed is a line with its price with tax.
type Taxed struct {
	Order int64
	Shop  int64
	N     int64
	Gross int64
	Net   int64
}

func Tax(l *Line) Taxed {
	return Taxed{Order: l.Order, Shop: l.Shop, N: l.N, Gross: l.Price * 120 / 100, Net: l.Price}
}

func TaxedShop(t *Taxed) int64 { return t.Shop }

type Sum struct{ Gross, Lines int64 }

func AddTaxed(s *Sum, t *Taxed) { s.Gross += t.Gross; s.Lines++ }

type ShopSum struct {
	Shop  int64 `json:"shop"`
	End   int64 `json:"end,omitempty"`
	Gross int64 `json:"gross"`
	Lines int64 `json:"lines"`
}

func WindowSum(shop int64, w pipegen.Window, s *Sum) ShopSum {
	return ShopSum{Shop: shop, End: w.End.UnixMilli(), Gross: s.Gross, Lines: s.Lines}
}

func ShopTotal(shop int64, s *Sum) ShopSum {
	return ShopSum{Shop: shop, Gross: s.Gross, Lines: s.Lines}
}

func OrderUser(o *Order) string { return o.User }

type Seen struct{ Orders, Items int64 }

// UserTotal is a user's orders and items so far.
type UserTotal struct {
	User   string `json:"user"`
	Order  int64  `json:"order"`
	Orders int64  `json:"orders"`
	Items  int64  `json:"items"`
}

func Track(user string, s *Seen, o *Order, _ pipegen.Context, emit func(UserTotal)) {
	s.Orders++
	s.Items += o.Items
	emit(UserTotal{User: user, Order: o.ID, Orders: s.Orders, Items: s.Items})
}

func TaxedOrder(t *Taxed) int64 { return t.Order }

func OrderID(o *Order) int64 { return o.ID }

// Paired is a taxed line with its order's user.
type Paired struct {
	Order int64  `json:"order"`
	N     int64  `json:"n"`
	User  string `json:"user"`
	Gross int64  `json:"gross"`
}

func Pair(t *Taxed, o *Order) Paired {
	return Paired{Order: t.Order, N: t.N, User: o.User, Gross: t.Gross}
}

// OrderGap is the gap of a user's sessions: an hour, longer than the
// orders' 3 seconds, so that each user has one session.
func OrderGap(o *Order) time.Duration { return time.Hour }

func AddOrder(s *Seen, o *Order) { s.Orders++; s.Items += o.Items }

func MergeSeen(dst, src *Seen) { dst.Orders += src.Orders; dst.Items += src.Items }

func SessionOf(user string, _ pipegen.Window, s *Seen) UserTotal {
	return UserTotal{User: user, Orders: s.Orders, Items: s.Items}
}

// Tag is an order of more than two items, tagged.
type Tag struct {
	Order int64  `json:"order"`
	Tag   string `json:"tag"`
}

func Tags(o *Order) []Tag {
	if o.Items <= 2 {
		return nil
	}
	return []Tag{{Order: o.ID, Tag: "big"}, {Order: o.ID, Tag: o.User}}
}
