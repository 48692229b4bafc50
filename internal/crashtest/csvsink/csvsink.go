// Package csvsink is the pipeline of the csv crash test: orders read from
// a csv file, priced, and written as csv (see pipeline.yaml).
package csvsink

import (
	"strings"
	"time"
)

// Order is a row of the input file.
type Order struct {
	ID       int64     `csv:"id"`
	Customer string    `csv:"customer"`
	Amount   float64   `csv:"amount"`
	Placed   time.Time `csv:"placed"`
	Note     string    `csv:"note"`
}

// Priced is a row of the output.
type Priced struct {
	ID       int64         `csv:"id"`
	Customer string        `csv:"customer"`
	Gross    float64       `csv:"gross"`
	Large    bool          `csv:"large"`
	Placed   time.Time     `csv:"placed"`
	Due      time.Duration `csv:"due"`
	Cents    uint32        `csv:"cents"`
	Note     string        `csv:"note"`
	Internal string        `csv:"-"`
}

// Delay is how long Price waits on every tenth order, so that a run
// lasts long enough to be killed during it (a sleep is a millisecond or
// so at least: one per order would make the run long).
var Delay = time.Millisecond

// Price adds tax and a due date to an order.
func Price(o Order) Priced {
	if o.ID%10 == 0 && Delay > 0 {
		time.Sleep(Delay)
	}
	gross := o.Amount * 1.2
	return Priced{
		ID:       o.ID,
		Customer: strings.ToUpper(o.Customer),
		Gross:    gross,
		Large:    gross >= 1000,
		Placed:   o.Placed,
		Due:      time.Duration(o.ID%72) * time.Hour,
		Cents:    uint32(int64(o.Amount*100) % 100),
		Note:     o.Note,
		Internal: "never written",
	}
}
