// Package fan is the golden case of one stream read by two operators, one
// of them with a parallelism of its own (a rebalance), a flatmap returning
// a slice, and an aggregate keyed by an integer.
package fan

import "fmt"

type Order struct {
	ID    uint64
	Items []string
}

func NextOrder(seq uint64) (Order, bool) {
	if seq >= 12 {
		return Order{}, false
	}
	items := []string{"tea", "cake", "soup"}[:1+seq%3]
	return Order{ID: seq, Items: items}, true
}

func Large(o Order) bool { return len(o.Items) == 3 }

func Describe(o Order) string { return fmt.Sprintf("order %d: %d items", o.ID, len(o.Items)) }

type Line struct {
	Size int64
	Item string
}

func Lines(o Order) []Line {
	out := make([]Line, 0, len(o.Items))
	for _, it := range o.Items {
		out = append(out, Line{Size: int64(len(o.Items)), Item: it})
	}
	return out
}

func BySize(l Line) int64 { return l.Size }

type Tally struct{ Items int }

func AddLine(t *Tally, _ Line) { t.Items++ }

type SizeTally struct {
	Size  int64 `json:"size"`
	Items int   `json:"items"`
}

func Result(size int64, t *Tally) SizeTally { return SizeTally{Size: size, Items: t.Items} }
