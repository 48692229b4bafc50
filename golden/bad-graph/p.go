// Package p is the golden case of a graph with cycles, duplicates and
// dangling inputs.
package p

func Same(s string) string { return s }
func Key(s string) string  { return s }

type N struct{ N int }

func Add(n *N, s string) { n.N++ }
