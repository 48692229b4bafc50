// Package p is the golden case of directives that parse but do not
// type-check: the type checker's messages point at the directives.
package p

//pipegen:pipeline types
//pipegen:source events connector=file path=events.jsonl format=jsonl type=Event
//pipegen:source others connector=file path=others.jsonl format=jsonl type=Evnt
//pipegen:sink out input=totals connector=file path=out
//pipegen:sink others-out input=others connector=stdout
//pipegen:union both inputs=events,ptr

type Event struct {
	User  string
	Count int
}

type Sum struct{ N int }

// PtrMap takes a pointer to a pointer: a record goes by value or by pointer.
//
//pipegen:map ptr input=events
func PtrMap(e **Event) Event { return **e }

// Add has the right signature; its key does not.
//
//pipegen:aggregate totals input=events key=ByUsr result=Result
func Add(s *Sum, e Event) { s.N += e.Count }

func ByUser(e Event) string { return e.User }

func Result(user string, s *Sum) Sum { return *s }

// Count keeps no state per key.
//
//pipegen:reduce counts input=events
func Count(a, b Event) Event { return a }

// Keyed is keyed by a pointer.
//
//pipegen:aggregate keyed input=events key=PtrKey
func Keyed(s *Sum, e Event) {}

func PtrKey(e Event) *Event { return &e }
