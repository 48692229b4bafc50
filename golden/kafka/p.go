// Package orders is a golden case: Kafka on both ends, with event time per
// partition and a message key.
package orders

import "time"

type Order struct {
	Customer string    `json:"customer"`
	Amount   int64     `json:"amount"`
	At       time.Time `json:"at"`
}

type Sum struct{ Amount int64 }

type Total struct {
	Customer string `json:"customer"`
	Amount   int64  `json:"amount"`
}

func OrderTime(o Order) time.Time { return o.At }

func ByCustomer(o *Order) string { return o.Customer }

func Add(s *Sum, o Order) { s.Amount += o.Amount }

func Result(customer string, s *Sum) Total { return Total{Customer: customer, Amount: s.Amount} }

func TotalKey(t Total) string { return t.Customer }

func Larger(a, b Order) Order {
	if b.Amount > a.Amount {
		return b
	}
	return a
}
