// Package p is a golden case of dead-letter mistakes.
package p

// Gen generates a few strings.
func Gen(seq uint64) (string, bool) { return "x", seq < 3 }
