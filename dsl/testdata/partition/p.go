// Package partition is a fixture of dsl's tests: edges between nodes of
// equal and different parallelism, and into a keyed node.
package partition

func Gen(seq uint64) (int, bool) { return int(seq), seq < 10 }

func Id(n int) int { return n }

func Keep(n int) bool { return n%2 == 0 }

func Key(n int) int { return n % 3 }

func Sum(acc, n int) int { return acc + n }
