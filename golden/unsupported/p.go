// Package p is the golden case of features this compiler parses but does
// not run yet: each gets a clear diagnostic, never a silent skip.
package p

import "time"

type Event struct {
	User string
	At   time.Time
}

func Parse(s string) Event  { return Event{User: s} }
func ByUser(e Event) string { return e.User }
func At(e Event) time.Time  { return e.At }
func Same(e Event) Event    { return e }
func Join(a, b Event) Event { return a }
func Handle(e Event) Event  { return e }
func OnTimer(e Event) Event { return e }
