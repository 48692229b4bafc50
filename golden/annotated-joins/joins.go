// Package joins is the golden case of joins written as directives: a
// self-join with an excluded lower bound, an interval join with both
// bounds excluded, and the late side outputs of both its inputs (the
// YAML twin is golden/joins).
package joins

import "fmt"

//pipegen:pipeline joins parallelism=2
//pipegen:source events connector=file parallelism=1 path=events.jsonl format=jsonl type=Event timestamps.extract=EventTime
//pipegen:source payments connector=file parallelism=1 path=payments.jsonl format=jsonl type=Payment timestamps.extract=PaymentTime
//pipegen:union all inputs=next,paid,late-events
//pipegen:sink out input=all connector=file path=out
//pipegen:sink late-payments input=paid.late-right connector=file path=late-payments

type Event struct {
	User string `json:"user"`
	Ms   int64  `json:"ms"`
}

type Payment struct {
	User   string `json:"user"`
	Ms     int64  `json:"ms"`
	Amount int    `json:"amount"`
}

func EventTime(e Event) int64     { return e.Ms }
func PaymentTime(p Payment) int64 { return p.Ms }

func ByUser(e Event) string        { return e.User }
func PaymentUser(p Payment) string { return p.User }

// Next pairs an event with the same user's events up to 1s after it.
//
//pipegen:join next inputs=events,events key=ByUser,ByUser between=0s,1s exclusive=lower
func Next(a, b Event) string { return fmt.Sprintf("next %s %d -> %d", a.User, a.Ms, b.Ms) }

// Paid pairs an event with a payment of its user less than 500ms away.
//
//pipegen:join paid inputs=events,payments key=ByUser,PaymentUser between=-500ms,500ms exclusive=both
func Paid(e Event, p Payment) string {
	return fmt.Sprintf("paid %s event@%d payment@%d amount=%d", e.User, e.Ms, p.Ms, p.Amount)
}

// LateEvent writes an event too late to be paired.
//
//pipegen:map late-events input=paid.late-left
func LateEvent(e Event) string { return fmt.Sprintf("late event %s @%d", e.User, e.Ms) }
