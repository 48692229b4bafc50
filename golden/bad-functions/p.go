// Package p is the golden case of functions that are missing, not
// functions, or of the wrong signature.
package p

type Event struct {
	User string
	N    int
}

type Total struct{ N int }

var NotAFunction = 3

func ParseEvent(line string) Event { return Event{User: line} }

func lower(e Event) Event { return e }

func Identity[T any](t T) T { return t }

func PtrMap(e **Event) Event { return **e }

func KeepAll(e Event) int { return 1 }

func Explode(e Event) Event { return e }

func UserKey(e Event) string { return e.User }

func BadKey(e Event, n int) string { return e.User }

func Merge(a, b Event) Total { return Total{} }

func AddByValue(t Total, e Event) {}

func Result(key int, t *Total) string { return "" }

// MixedPair takes one record by pointer and the other by value: a join's
// apply takes both one way.
func MixedPair(a *Event, b Event) Event { return b }
