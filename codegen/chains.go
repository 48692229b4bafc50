package codegen

import (
	"github.com/pipegen/pipegen/ir"
)

// A chain is a tree of nodes that run in one goroutine per subtask: a head
// (a source, or a node that reads from an inbox) and the nodes fused behind
// it, which receive records by plain method calls.
type chain struct {
	head  *ir.Node
	nodes []*ir.Node // head first, then fused nodes in topological order
	// outs are the edges that leave the chain towards other chains' inboxes.
	outs []crossEdge
}

// crossEdge is an edge between two chains: records travel over an Out and
// an Inbox.
type crossEdge struct {
	from  *ir.Node
	to    *ir.Node
	input int // index of the edge in to.Inputs
}

// fused reports whether node n runs in its input's goroutine: it has one
// input, connected forward (no repartitioning: the same parallelism, or
// none of its own, which makes a map, filter, flatmap or sink run at its
// input's; see dsl/partition.go). At run time it has its head's
// parallelism.
func fused(n *ir.Node) bool { return n.Fused() }

// buildChains splits the graph into chains. Nodes are topologically
// ordered, so a fused node's input already has its chain.
func buildChains(p *ir.Pipeline) ([]*chain, map[int]*chain) {
	var chains []*chain
	chainOf := map[int]*chain{}
	for _, n := range p.Nodes {
		if fused(n) {
			c := chainOf[n.Inputs[0].From]
			c.nodes = append(c.nodes, n)
			chainOf[n.ID] = c
			continue
		}
		c := &chain{head: n, nodes: []*ir.Node{n}}
		chains = append(chains, c)
		chainOf[n.ID] = c
	}
	for _, n := range p.Nodes {
		if fused(n) {
			continue
		}
		for i, e := range n.Inputs {
			from := p.Nodes[e.From]
			c := chainOf[from.ID]
			c.outs = append(c.outs, crossEdge{from: from, to: n, input: i})
		}
	}
	return chains, chainOf
}
