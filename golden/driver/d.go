// Package driver is the golden case of the test driver (pipegen generate
// -test, golden/driver/jobtest): a process operator with a
// processing-time timer, a side output, and a stateless branch to a
// second sink.
package driver

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen"
)

type Order struct {
	Customer string    `json:"customer"`
	Amount   int       `json:"amount"`
	At       time.Time `json:"at"`
}

func OrderTime(o Order) time.Time { return o.At }
func ByCustomer(o Order) string   { return o.Customer }
func IsBig(o Order) bool          { return o.Amount >= 100 }

// Pending is a customer's orders since the last reminder.
type Pending struct{ N, Total int }

// RemindAfter is the processing time after a customer's first order at
// which they are reminded.
const RemindAfter = 10 * time.Second

// OnOrder counts an order, and sets the customer's reminder with their
// first one; an order behind the watermark goes to the side output late.
// An order of a negative amount is a bug: it panics.
func OnOrder(customer string, p *Pending, o Order, ctx pipegen.Context, emit func(string)) {
	if o.Amount < 0 {
		panic("negative amount")
	}
	if !ctx.Timestamp().After(ctx.Watermark()) {
		ctx.Output("late", o)
		return
	}
	if p.N == 0 {
		ctx.ProcessingTimerAt(time.Now().Add(RemindAfter))
		ctx.Output("first", customer) // read by no node: the driver collects it
	}
	p.N++
	p.Total += o.Amount
}

// Remind emits the reminder and forgets the customer.
func Remind(customer string, p *Pending, at time.Time, ctx pipegen.Context, emit func(string)) {
	emit(fmt.Sprintf("%s: %d orders, %d (%s timer)", customer, p.N, p.Total, ctx.Fired()))
	ctx.Clear()
}
