// Package p is the golden case of types that do not fit: between nodes, as
// keys, in state, in csv and as output formats.
package p

type A struct{ X int }

type B struct{ X int }

type WithFunc struct {
	X    int
	Hook func()
}

type WithChan struct{ C chan int }

type Row struct {
	Name string
	Tags []string
}

func ToA(s string) A { return A{} }
func ToB(s string) B { return B{} }
func PtrKey(a A) *A  { return &a }
func ByX(a A) int    { return a.X }

func AddHook(acc *WithFunc, a A) {}

func ToChan(a A) WithChan { return WithChan{} }

// Hidden keeps its count in an unexported field, which generated code
// cannot serialize.
type Hidden struct{ n int }

func AddHidden(h *Hidden, a A) { h.n++ }
