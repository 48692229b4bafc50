// Package bad is a fixture of compile's tests: a pipeline with a
// structural problem and a type problem.
package bad

func Next(seq uint64) (int, bool) { return int(seq), seq < 5 }

func Square(n int) int { return n * n }
