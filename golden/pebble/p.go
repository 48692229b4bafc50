// Package p is the golden case of the pebble state backend.
package p

import (
	"fmt"

	"github.com/pipegen/pipegen"
)

// Next generates the numbers 0 to 9999.
func Next(seq uint64) (int64, bool) { return int64(seq), seq < 10000 }

// Mod17 keys a number by its remainder of 17.
func Mod17(n int64) int64 { return n % 17 }

// Mod7 keys a number by its remainder of 7.
func Mod7(n int64) int64 { return n % 7 }

// Sum is the state of a remainder.
type Sum struct {
	Count int64
	Total int64
	Last  string
}

// Add adds a number.
func Add(s *Sum, n int64) {
	s.Count++
	s.Total += n
	s.Last = fmt.Sprint(n)
}

// Result is the sum of a remainder.
type Result struct {
	Mod   int64  `json:"mod"`
	Count int64  `json:"count"`
	Total int64  `json:"total"`
	Last  string `json:"last"`
}

// Total makes the result.
func Total(mod int64, s *Sum) Result { return Result{mod, s.Count, s.Total, s.Last} }

// Ten collects numbers of a remainder until it has ten.
type Ten struct{ Numbers []int64 }

// EveryTenth emits the sum of every ten numbers of a remainder and starts
// over: its state is cleared.
func EveryTenth(mod int64, st *Ten, n int64, ctx pipegen.Context, emit func(string)) {
	st.Numbers = append(st.Numbers, n)
	if len(st.Numbers) < 10 {
		return
	}
	var sum int64
	for _, x := range st.Numbers {
		sum += x
	}
	emit(fmt.Sprintf("%d: %d", mod, sum))
	ctx.Clear()
}
