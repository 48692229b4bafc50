package dsl

import (
	"fmt"
	"strings"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
)

// warnNoSink warns about the nodes whose records reach no sink: they are
// computed and thrown away, which is seldom what the author means (a sink
// forgotten, or an input that names the wrong node). One warning for each
// part of the graph that reaches no sink, at the first node of it (a node
// whose inputs all reach a sink, or a source), naming the nodes behind it.
// A node reaches a sink when some node that reads it, on any of its
// outputs (side outputs too), is a sink or reaches one.
func (r *resolver) warnNoSink() {
	defer func() { r.nodeName = "" }()
	consumers := map[*rnode][]*rnode{}
	for _, n := range r.order {
		for _, in := range n.inputs {
			consumers[in.from] = append(consumers[in.from], n)
		}
	}
	reaches := map[*rnode]bool{}
	for i := len(r.order) - 1; i >= 0; i-- {
		n := r.order[i]
		if n.ir.Kind == ir.Sink {
			reaches[n] = true
			continue
		}
		for _, c := range consumers[n] {
			if reaches[c] {
				reaches[n] = true
				break
			}
		}
	}
	for _, n := range r.order {
		if reaches[n] {
			continue
		}
		first := true
		for _, in := range n.inputs {
			if !reaches[in.from] {
				first = false
			}
		}
		if !first {
			continue
		}
		// The nodes behind n, which reach no sink either.
		var behind []string
		seen := map[*rnode]bool{n: true}
		var visit func(m *rnode)
		visit = func(m *rnode) {
			for _, c := range consumers[m] {
				if !seen[c] {
					seen[c] = true
					behind = append(behind, fmt.Sprintf("%q", c.spec.Name.V))
					visit(c)
				}
			}
		}
		visit(n)
		what, done := fmt.Sprintf("source %q", n.spec.Name.V), "read"
		if n.ir.Kind != ir.Source {
			what, done = fmt.Sprintf("operator %s %q", n.ir.Kind, n.spec.Name.V), "computed"
		}
		also := ""
		if len(behind) > 0 {
			also = fmt.Sprintf(", nor do those of the nodes that read it (%s)", strings.Join(behind, ", "))
		}
		r.nodeName = n.spec.Name.V
		r.warn(n.spec.Name.Pos, diag.Unread, "the records of %s reach no sink%s: they are %s and dropped; add a sink that reads it (%v), or remove it", what, also, done, ex("input", n.spec.Name.V))
	}
}
