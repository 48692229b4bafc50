// Package keys is a fixture of dsl's tests: key types that are accepted.
package keys

type Rec struct {
	S string
	N int
}

type Pair struct {
	S string
	N int64
	B bool
}

type Count struct{ N int }

func Next(seq uint64) (Rec, bool) { return Rec{S: "s", N: int(seq)}, seq < 3 }

func Merge(acc, r Rec) Rec { return Rec{S: r.S, N: acc.N + r.N} }

func ByString(r Rec) string { return r.S }

func ByInt(r Rec) int { return r.N }

func ByPair(r Rec) Pair { return Pair{S: r.S, N: int64(r.N)} }

func Add(c *Count, _ Rec) { c.N++ }
