// Package totals is the running-total pipeline of golden/running-totals: a
// generator makes Orders orders of Customers customers, Price turns each
// into a one-order Total, and a reduce keyed by ByCustomer adds them up,
// emitting every customer's running total after each of its orders. Last,
// the sequence number of the order a total ends with, makes any change of
// order visible in the output.
package totals

import "fmt"

// Orders is the number of orders the generator makes: enough batches
// (runtime BatchSize, 256) that a rebalance edge would spread every
// customer's orders over several subtasks.
const Orders = 20_000

// Customers is the number of distinct customers.
const Customers = 37

// Order is one generated order.
type Order struct {
	Seq      uint64
	Customer string
	Cents    int64
}

// Total is a customer's running total, the reduce's state and output.
type Total struct {
	Customer string `json:"customer"`
	Orders   int64  `json:"orders"`
	Cents    int64  `json:"cents"`
	Last     uint64 `json:"last"`
}

// NextOrder makes order seq: a customer and an amount that look random
// and depend on seq alone.
func NextOrder(seq uint64) (Order, bool) {
	if seq >= Orders {
		return Order{}, false
	}
	x := (seq + 1) * 0x9E3779B97F4A7C15
	x ^= x >> 29
	return Order{Seq: seq, Customer: fmt.Sprintf("c%02d", x%Customers), Cents: int64(x>>8%10_000) + 1}, true
}

// Price turns an order into the total of that order alone.
func Price(o Order) Total {
	return Total{Customer: o.Customer, Orders: 1, Cents: o.Cents, Last: o.Seq}
}

// ByCustomer keys a total by its customer.
func ByCustomer(t Total) string { return t.Customer }

// Add adds an order's total to the customer's running total.
func Add(acc, in Total) Total {
	return Total{Customer: acc.Customer, Orders: acc.Orders + in.Orders, Cents: acc.Cents + in.Cents, Last: in.Last}
}
