// Package broken is a fixture of pipegen's tests: Go code that does not
// compile.
package broken

func Next(seq uint64) (int, bool) { return seq, seq < 5 }
