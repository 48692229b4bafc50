// Package joins is the golden case of interval joins on the pebble
// backend: the functions of the case joins.
package joins

import "fmt"

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

// EventSecond and PaymentSecond key records by user and second of event
// time.
func EventSecond(e Event) string     { return fmt.Sprintf("%s@%d", e.User, e.Ms/1000) }
func PaymentSecond(p Payment) string { return fmt.Sprintf("%s@%d", p.User, p.Ms/1000) }

// Next pairs an event with the same user's events up to 1s after it (not
// at the same time: the lower bound is excluded).
func Next(a, b Event) string { return fmt.Sprintf("next %s %d -> %d", a.User, a.Ms, b.Ms) }

// Paid pairs an event with a payment of its user less than 500ms away.
func Paid(e Event, p Payment) string {
	return fmt.Sprintf("paid %s event@%d payment@%d amount=%d", e.User, e.Ms, p.Ms, p.Amount)
}

func LateEvent(e Event) string { return fmt.Sprintf("late event %s @%d", e.User, e.Ms) }
