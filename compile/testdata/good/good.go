// Package good is a fixture of compile's tests: a pipeline without
// problems.
package good

func Next(seq uint64) (int, bool) { return int(seq), seq < 5 }

func Square(n int) int { return n * n }
