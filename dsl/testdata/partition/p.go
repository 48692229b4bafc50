// Package partition is a fixture of dsl's tests: edges between nodes of
// equal and different parallelism, with and without their own, into
// unions and into keyed nodes.
package partition

func Gen(seq uint64) (int, bool) { return int(seq), seq < 10 }

func Id(n int) int { return n }

func Keep(n int) bool { return n%2 == 0 }

func Twice(n int) []int { return []int{n, n} }

func Key(n int) int { return n % 3 }

func Sum(acc, n int) int { return acc + n }

func Add(acc *int, n int) { *acc += n }
