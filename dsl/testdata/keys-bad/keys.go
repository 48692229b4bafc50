// Package keys is a fixture of dsl's tests: key types that are refused.
package keys

import "fmt"

type Rec struct {
	S string
	N int
}

type Hidden struct {
	S      string
	secret int
}

type WithPointer struct {
	S string
	P *int
}

type WithMap struct {
	M map[string]int
}

func Next(seq uint64) (Rec, bool) { return Rec{S: "s", N: int(seq)}, seq < 3 }

func Merge(acc, r Rec) Rec { return Rec{S: r.S, N: acc.N + r.N} }

func ByPointer(r Rec) *Rec { return &r }

func ByInterface(r Rec) fmt.Stringer { return nil }

func ByHidden(r Rec) Hidden { return Hidden{S: r.S, secret: r.N} }

func ByMap(r Rec) map[string]int { return map[string]int{r.S: r.N} }

func ByPointerField(r Rec) WithPointer { return WithPointer{S: r.S} }

func ByMapField(r Rec) WithMap { return WithMap{} }

func Show(r Rec) string { return fmt.Sprint(r) }
