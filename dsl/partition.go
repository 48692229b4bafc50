package dsl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
)

// Partitioning, fusion and the order of records (docs/dsl.md, Partitioning
// and fusion).
//
// The same input gives the same output at any parallelism: the records of
// one key from one ordered source subtask reach their keyed node in order.
// Hash and forward edges keep the order of each sender's records; a
// rebalance edge spreads them over its receivers, whose outputs meet again
// at the next keyed node in an order that changes from run to run. So a
// stateless node without a parallelism of its own runs at its input's,
// fused behind it; a rebalance edge is left only where a node's own
// parallelism asks for one, and the compiler warns where its records reach
// a keyed node whose output depends on their order.

// inherits reports whether n runs at the parallelism of its input: a map,
// filter, flatmap or sink without a parallelism of its own. Its one input
// is forward, so codegen fuses it behind that input and at run time it has
// its chain head's parallelism, whatever --parallelism or --set say.
func inherits(n *rnode) bool {
	if n.ir.Parallelism != 0 || len(n.inputs) != 1 {
		return false
	}
	switch n.ir.Kind {
	case ir.Map, ir.Filter, ir.FlatMap, ir.Sink:
		return true
	}
	return false
}

// inheritParallelism sets every node's par, in topological order (a node
// on a cycle, reported already, may read its input's before it is set).
func (r *resolver) inheritParallelism() {
	for _, n := range r.order {
		n.par = n.ir.Parallelism
		if inherits(n) {
			n.par = n.inputs[0].from.par
		}
	}
}

// partition decides how records travel from one node to the next.
func partition(from, to *rnode) ir.Partition {
	switch {
	case to.ir.Kind.Stateful():
		return ir.Hash
	case to.ir.Parallelism == 0:
		// A node without a parallelism of its own: a stateless one runs
		// at its input's, a union passes each input subtask's records on
		// through one of its own subtasks, in order.
		return ir.Forward
	case from.par == to.ir.Parallelism:
		// The same number on both sides, or behind nodes that inherit
		// it: equal whatever run --parallelism says. (The default does
		// not equal a number even when it is that number today.)
		return ir.Forward
	}
	return ir.Rebalance
}

// orderSensitive reports whether what keyed node n emits can depend on the
// order in which the records of one key arrive, whatever its functions
// do: a reduce folds them in arrival order (a running total, the latest
// record), an aggregate with emit: update emits every intermediate
// accumulator, a process node runs its code record by record, and a join
// emits its pairs in the order it matches them. An aggregate that emits
// once per key (emit: final) or per window has seen all of them by then:
// its result depends on their order only when its add does (appending to
// a list), which the compiler cannot tell; it assumes not, as for counts,
// sums, minima and maxima.
func orderSensitive(n *rnode) bool {
	if n.ir.Kind == ir.Aggregate {
		return n.ir.Emit == "update"
	}
	return n.ir.Kind.Stateful()
}

// warnReordering warns at the parallelism of every node that a rebalance
// edge feeds when the records it spreads reach an order-sensitive keyed
// node: that node's output may change from run to run.
func (r *resolver) warnReordering() {
	defer func() { r.nodeName = "" }()
	consumers := map[*rnode][]*rnode{}
	for _, n := range r.order {
		for _, in := range n.inputs {
			consumers[in.from] = append(consumers[in.from], n)
		}
	}
	for _, n := range r.order {
		var spread []string
		for i, e := range n.ir.Inputs {
			if e.Partition == ir.Rebalance {
				spread = append(spread, fmt.Sprintf("%q", n.inputs[i].from.spec.Name.V))
			}
		}
		if len(spread) == 0 {
			continue
		}
		var keyed []*rnode
		var reached []string
		for _, k := range keyedBehind(n, consumers) {
			if orderSensitive(k) {
				keyed = append(keyed, k)
				reached = append(reached, fmt.Sprintf("%s %q", k.ir.Kind, k.spec.Name.V))
			}
		}
		if len(keyed) == 0 {
			continue
		}
		r.nodeName = n.spec.Name.V
		first := keyed[0]
		fix := fmt.Sprintf("drop it to run %q at the parallelism of %s, fused behind it, or key the records before they are spread: a process keyed like %q in place of %q keeps each key on one subtask", n.spec.Name.V, spread[0], first.spec.Name.V, n.spec.Name.V)
		if n.ir.Kind == ir.Union {
			fix = fmt.Sprintf("drop it so that %q passes the records of each input subtask on in order", n.spec.Name.V)
		}
		r.warn(n.spec.Parallelism.Pos, diag.Order, "%v on %q spreads the records of %s over its subtasks, so %s may see each key's records in a different order from run to run: %s",
			ex("parallelism", fmt.Sprint(n.ir.Parallelism)), n.spec.Name.V, andList(spread), andList(reached), fix)
	}
}

// keyedBehind lists the keyed nodes that records leaving n reach first, in
// topological order: behind n's consumers that are not keyed, not past a
// keyed one.
func keyedBehind(n *rnode, consumers map[*rnode][]*rnode) []*rnode {
	seen := map[*rnode]bool{}
	var keyed []*rnode
	var walk func(*rnode)
	walk = func(n *rnode) {
		for _, c := range consumers[n] {
			if seen[c] {
				continue
			}
			seen[c] = true
			if c.ir.Kind.Stateful() {
				keyed = append(keyed, c)
			} else {
				walk(c)
			}
		}
	}
	walk(n)
	slices.SortFunc(keyed, func(a, b *rnode) int { return a.ir.ID - b.ir.ID })
	return keyed
}

// andList joins items as "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
