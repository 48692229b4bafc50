// Package graph draws a pipeline's job graph from its IR, for `pipegen
// graph`: every node with its kind, function, parallelism, key and window;
// every edge with its partitioning; and the chains, the nodes fused into
// one goroutine per subtask. It writes the graph as Graphviz DOT, as a
// Mermaid flowchart (which GitHub renders in markdown) and as a
// self-contained SVG laid out here, without Graphviz.
//
// It is part of the compiler: it reads the IR and nothing of the runtime.
package graph

import (
	"fmt"
	"strings"
	"time"

	"github.com/pipegen/pipegen/ir"
)

// Graph is a pipeline's job graph, ready to draw.
type Graph struct {
	Name   string
	Nodes  []Node // in the IR's topological order
	Edges  []Edge
	Chains []Chain // in the order of their heads
}

// Node is one source, operator or sink.
type Node struct {
	ID   int
	Name string
	Kind string
	// Details describe the node, one line each: its function or connector,
	// key, window, event time.
	Details []string
	// Parallelism is the number of subtasks as compiled; Default is set
	// when it is the pipeline's default (run --parallelism changes it).
	Parallelism int
	Default     bool
	Chain       int // index in Graph.Chains
	// Depth is the node's depth in its chain's tree of fused nodes (0 for
	// the head).
	Depth int
}

// Edge is one input of a node.
type Edge struct {
	From, To int
	// Side names a side output of From ("late", "dead-letter"), "" for its
	// main output.
	Side string
	// Partition is forward, hash, rebalance or broadcast; Key the key
	// function a hash edge routes by.
	Partition string
	Key       string
	// Fused is set for an edge inside a chain: a plain method call.
	Fused bool
	// Input is "left" or "right" for an input of a join, "" otherwise.
	Input string
}

// Label is how the edge is written on the graph.
func (e Edge) Label() string {
	var s string
	switch {
	case e.Fused:
		s = "fused"
	case e.Partition == string(ir.Hash) && e.Key != "":
		s = "hash by " + e.Key
	default:
		s = e.Partition
	}
	if e.Side != "" {
		s = e.Side + ", " + s
	}
	if e.Input != "" {
		s = e.Input + ", " + s
	}
	return s
}

// Chain is a head and the nodes fused behind it: one goroutine per
// subtask.
type Chain struct {
	Head int
	// Nodes are the chain's nodes, head first, each followed by the
	// nodes fused behind it (depth first), so that a tree reads top down.
	Nodes []int
}

// Build makes the graph of pipeline p.
func Build(p *ir.Pipeline) *Graph {
	g := &Graph{Name: p.Name}
	chainOf := map[int]int{}
	for _, n := range p.Nodes {
		node := Node{ID: n.ID, Name: n.Name, Kind: string(n.Kind), Details: details(n)}
		h := p.Head(n)
		switch {
		case p.Nodes[h.ID].Parallelism > 0:
			node.Parallelism = h.Parallelism
		default:
			node.Parallelism, node.Default = p.Parallelism, true
		}
		if n.Fused() {
			in := n.Inputs[0].From
			node.Chain = chainOf[in]
			node.Depth = g.Nodes[in].Depth + 1
		} else {
			node.Chain = len(g.Chains)
			g.Chains = append(g.Chains, Chain{Head: n.ID})
		}
		chainOf[n.ID] = node.Chain
		g.Nodes = append(g.Nodes, node)
		for i, e := range n.Inputs {
			edge := Edge{From: e.From, To: n.ID, Side: e.Side, Partition: string(e.Partition), Fused: n.Fused()}
			if n.Kind == ir.Join {
				edge.Input = [2]string{"left", "right"}[min(i, 1)]
			}
			if e.Partition == ir.Hash {
				switch {
				case len(n.Keys) == len(n.Inputs):
					edge.Key = n.Keys[i].Name
				case n.Key != nil:
					edge.Key = n.Key.Name
				}
			}
			g.Edges = append(g.Edges, edge)
		}
	}
	// Each chain lists its tree depth first, children in topological
	// order.
	children := map[int][]int{}
	for _, e := range g.Edges {
		if e.Fused {
			children[e.From] = append(children[e.From], e.To)
		}
	}
	var walk func(c *Chain, id int)
	walk = func(c *Chain, id int) {
		c.Nodes = append(c.Nodes, id)
		for _, k := range children[id] {
			walk(c, k)
		}
	}
	for i := range g.Chains {
		walk(&g.Chains[i], g.Chains[i].Head)
	}
	return g
}

// Title is the line that names a chain: its head and its subtasks.
func (g *Graph) Title(c Chain) string {
	h := g.Nodes[c.Head]
	s := fmt.Sprintf("chain %s, %d subtask", h.Name, h.Parallelism)
	if h.Parallelism != 1 {
		s += "s"
	}
	if h.Default {
		s += " (default)"
	}
	return s
}

// details describes a node in a few short lines.
func details(n *ir.Node) []string {
	var ds []string
	name := func(f *ir.Func) string { return f.Name }
	switch n.Kind {
	case ir.Source:
		switch n.Connector {
		case "generator":
			ds = append(ds, "generator "+name(n.Fn))
		default:
			s := n.Connector
			if path, ok := n.Option("path"); ok {
				s += " " + path
			}
			ds = append(ds, s)
		}
		if n.Format != "" && n.Connector == "file" {
			f := "format " + n.Format
			if n.Out != nil && n.Format != "lines" {
				f += " of " + typeName(n.Out)
			}
			ds = append(ds, f)
		}
		if ts := n.Timestamps; ts != nil {
			s := "event time " + ts.Extract.Name
			if ts.MaxOutOfOrderness > 0 {
				s += ", out of order " + dur(ts.MaxOutOfOrderness)
			}
			ds = append(ds, s)
		}
	case ir.Map, ir.Filter, ir.FlatMap, ir.Reduce:
		ds = append(ds, string(n.Kind)+" "+name(n.Fn))
	case ir.Aggregate:
		s := "aggregate " + name(n.Add)
		if n.Result != nil {
			s += " → " + name(n.Result)
		}
		ds = append(ds, s)
	case ir.Process:
		s := "process " + name(n.Fn)
		if len(n.Fns) == 2 {
			s = "process " + name(n.Fns[0]) + ", " + name(n.Fns[1])
		}
		if n.OnTimer != nil {
			s += ", timers " + name(n.OnTimer)
		}
		ds = append(ds, s)
	case ir.Join:
		ds = append(ds, "join "+name(n.Apply))
		if len(n.Between) == 2 {
			b := fmt.Sprintf("between %s and %s", dur(n.Between[0]), dur(n.Between[1]))
			if n.Exclusive != "" {
				b += ", exclusive " + n.Exclusive
			}
			ds = append(ds, b)
		}
	case ir.Union:
		ds = append(ds, "union")
	case ir.Sink:
		s := n.Connector
		if path, ok := n.Option("path"); ok {
			s += " " + path
		}
		if n.Format != "" {
			s += ", " + n.Format
		}
		ds = append(ds, s)
	}
	switch {
	case len(n.Keys) > 0:
		var ks []string
		for _, k := range n.Keys {
			ks = append(ks, k.Name)
		}
		ds = append(ds, "keys "+strings.Join(ks, ", "))
	case n.Key != nil:
		ds = append(ds, "key "+n.Key.Name)
	}
	if w := n.Window; w != nil {
		var s string
		switch w.Kind {
		case "sliding":
			s = fmt.Sprintf("sliding %s every %s", dur(w.Size), dur(w.Every))
		case "count":
			s = fmt.Sprintf("count windows of %d records", w.Count)
			if w.CountEvery < w.Count {
				s += fmt.Sprintf(" every %d", w.CountEvery)
			}
		case "session":
			s = "session gap " + dur(w.Gap)
			if w.GapFn != nil {
				s = "session gap " + name(w.GapFn) + " per record"
			}
		default:
			s = w.Kind + " " + dur(w.Size)
		}
		if w.Kind == "count" {
			// No time.
		} else if w.Processing {
			s += ", processing time"
		} else {
			s += ", event time"
		}
		if n.Lateness > 0 {
			s += ", lateness " + dur(n.Lateness)
		}
		ds = append(ds, s)
	}
	if t := n.Trigger; t != nil {
		ds = append(ds, "early "+t.Text())
	}
	if n.Emit == "final" {
		ds = append(ds, "emit final")
	}
	return ds
}

// dur writes a duration the way a pipeline file does: 1m, not 1m0s.
func dur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// typeName is a record type's short name: the type without its package
// path.
func typeName(t *ir.Type) string {
	if t.Name != "" {
		return t.Name
	}
	return t.String()
}
