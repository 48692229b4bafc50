// Package reorder is the golden case of a pipeline that compiles with a
// warning.
package reorder

type Order struct {
	Customer string
	Cents    int64
}

func Next(seq uint64) (Order, bool) {
	return Order{Customer: string(rune('a' + seq%3)), Cents: int64(seq)}, seq < 9
}

func Price(o Order) Order { return o }

func ByCustomer(o Order) string { return o.Customer }

func Add(acc, in Order) Order { return Order{Customer: acc.Customer, Cents: acc.Cents + in.Cents} }

// Keep keeps the latest order.
func Keep(acc *Order, in Order) { *acc = in }

func Count(n *int, _ Order) { *n++ }
