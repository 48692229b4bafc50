// Package bad is a fixture of pipegen's tests: a pipeline with an unknown
// key and a function of the wrong signature.
package bad

func Next(seq uint64) (int, bool) { return int(seq), seq < 5 }

func Square(n string) int { return len(n) }
