// Package panics is a fixture of pipegen's tests: a pipeline whose map
// panics, so that the program prints a stack.
package panics

func Next(seq uint64) (int, bool) { return int(seq), seq < 5 }

func Square(n int) int {
	if n == 3 {
		panic("three")
	}
	return n * n
}
