// Package orders is the golden case of directives over functions that
// take their input records by pointer (docs/dsl.md, Records by pointer):
// a filter, a map, a key function and an aggregate's add. They read the
// record through the pointer and neither keep nor change it.
package orders

import "fmt"

//pipegen:pipeline orders
//pipegen:source orders connector=file path=orders.jsonl format=jsonl type=Order
//pipegen:sink out input=totals connector=stdout

// Order is large enough (five fields) that Go keeps it in memory.
type Order struct {
	User  string `json:"user"`
	Shop  string `json:"shop"`
	Items int64  `json:"items"`
	Price int64  `json:"price"`
	Ms    int64  `json:"ms"`
}

// Paid keeps the orders with a price.
//
//pipegen:filter paid input=orders
func Paid(o *Order) bool { return o.Price > 0 }

// Spend is what a user spent on an order.
type Spend struct {
	User   string
	Shop   string
	Amount int64
}

// ToSpend is what an order cost.
//
//pipegen:map spends input=paid
func ToSpend(o *Order) Spend { return Spend{User: o.User, Shop: o.Shop, Amount: o.Items * o.Price} }

// Sum is a user's orders and spending.
type Sum struct{ Orders, Amount int64 }

// AddSpend adds an order's spending.
//
//pipegen:aggregate totals input=spends key=SpendUser result=Total emit=final
func AddSpend(s *Sum, sp *Spend) { s.Orders++; s.Amount += sp.Amount }

func SpendUser(s *Spend) string { return s.User }

func Total(user string, s *Sum) string {
	return fmt.Sprintf("%s: %d orders, %d", user, s.Orders, s.Amount)
}
