// Package p is the golden case of option values that are wrong.
package p

type Event struct{ User string }

func Gen(seq uint64) Event { return Event{} }
