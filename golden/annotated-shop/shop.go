// Package shop is the golden case of the annotation front end that runs:
// every operator kind, both sources, both sinks and every pipeline setting,
// written as //pipegen: directives.
package shop

import (
	"fmt"
	"strings"
)

//pipegen:pipeline shop parallelism=2 max-parallelism=64 checkpoint.mode=exactly-once checkpoint.interval=30s checkpoint.timeout=5m checkpoint.min-pause=1s checkpoint.retain=2 checkpoint.dir=ckpt restart.strategy=fixed-delay restart.attempts=5 restart.delay=2s state.backend=memory
//pipegen:source orders connector=file path="orders dir" format=jsonl type=Order on-error=skip
//pipegen:source returns connector=file path=returns.csv format=csv type=Return delimiter=";"
//pipegen:union all-orders inputs=orders,demo
//pipegen:union all-lines inputs=lines,refunds
//pipegen:sink totals-out input=totals connector=file path=out/totals
//pipegen:sink print input=running connector=stdout

type Order struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Items    []Item `json:"items"`
}

type Item struct {
	SKU   string  `json:"sku"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

type Line struct {
	Customer, SKU string
	Amount        float64
}

func (l Line) String() string { return fmt.Sprintf("%s %s %.2f", l.Customer, l.SKU, l.Amount) }

type Return struct {
	Customer string
	SKU      string `csv:"item"`
	Amount   float64
}

type CustomerSKU struct{ Customer, SKU string }

type Sum struct {
	Amount float64
	Lines  int
}

type Total struct {
	Customer string  `json:"customer"`
	Amount   float64 `json:"amount"`
	Lines    int     `json:"lines"`
}

// Demo makes three orders.
//
//pipegen:source demo connector=generator parallelism=1 rate=0
func Demo(seq uint64) (Order, bool) {
	if seq >= 3 {
		return Order{}, false
	}
	return Order{ID: fmt.Sprintf("demo-%d", seq), Customer: "demo", Items: []Item{{SKU: "pen", Qty: int(seq) + 1, Price: 1.5}}}, true
}

// Valid keeps orders with a customer.
//
//pipegen:filter valid input=all-orders
func Valid(o Order) bool { return o.Customer != "" }

// Lines makes a line per item.
//
//pipegen:flatmap lines input=valid
func Lines(o Order) []Line {
	var out []Line
	for _, it := range o.Items {
		out = append(out, Line{Customer: o.Customer, SKU: it.SKU, Amount: float64(it.Qty) * it.Price})
	}
	return out
}

// Refund turns a return into a negative line.
//
//pipegen:map refunds input=returns
func Refund(r Return) (Line, error) {
	if r.Amount < 0 {
		return Line{}, fmt.Errorf("return of %s by %s: negative amount", r.SKU, r.Customer)
	}
	return Line{Customer: r.Customer, SKU: strings.ToLower(r.SKU), Amount: -r.Amount}, nil
}

func ByCustomer(l Line) string { return l.Customer }

func ByCustomerSKU(l Line) CustomerSKU { return CustomerSKU{l.Customer, l.SKU} }

// AddLine adds a line to a customer's sum.
//
//pipegen:aggregate totals input=all-lines key=ByCustomer result=MakeTotal emit=final uid=totals-v1
func AddLine(s *Sum, l Line) {
	s.Amount += l.Amount
	s.Lines++
}

func MakeTotal(customer string, s *Sum) Total {
	return Total{Customer: customer, Amount: s.Amount, Lines: s.Lines}
}

// Merge adds up the lines of a customer and SKU.
//
//pipegen:reduce running input=all-lines parallelism=3 key=ByCustomerSKU emit=final
func Merge(acc, l Line) Line {
	acc.Amount += l.Amount
	return acc
}
