// Package order is a fixture of dsl's tests: an operator declared before
// its input.
package order

func Gen(seq uint64) (string, bool) { return "x", seq < 3 }

func Id(s string) string { return s }
