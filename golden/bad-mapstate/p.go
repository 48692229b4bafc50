// Package p holds map state and state-ttl that the compiler refuses.
package p

import (
	"strings"

	"github.com/pipegen/pipegen"
)

func Next(seq uint64) (string, bool) { return "w", seq < 10 }

func ByWord(w string) string { return w }

func Upper(w string) string { return strings.ToUpper(w) }

func Longer(a, b string) string {
	if len(b) > len(a) {
		return b
	}
	return a
}

type FloatState struct {
	M pipegen.MapState[float64, int]
}

func FloatKeys(k string, s *FloatState, w string, ctx pipegen.Context, emit func(string)) {}

type HiddenState struct{ m pipegen.MapState[string, int] }

func Hidden(k string, s *HiddenState, w string, ctx pipegen.Context, emit func(string)) {}

type Inner struct{ M pipegen.MapState[string, int] }

type NestedState struct{ In Inner }

func Nested(k string, s *NestedState, w string, ctx pipegen.Context, emit func(string)) {}

type Acc struct{ M pipegen.MapState[string, int] }

func AddAcc(a *Acc, w string) {}
