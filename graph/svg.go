package graph

import (
	"fmt"
	"html"
	"slices"
	"strings"
)

// The SVG's measures, in pixels. Text is monospace, so that a line's width
// is known from its length without a font.
const (
	charWidth  = 7.2
	lineHeight = 16.0
	fontSize   = 12
	pad        = 8.0  // inside a chain's box and a node's
	titleH     = 22.0 // a chain's title line
	nodeGap    = 8.0  // between the nodes of a chain
	indent     = 18.0 // per level of fused depth
	chainGapX  = 110.0
	chainGapY  = 28.0
	margin     = 16.0
)

// box is a rectangle.
type box struct{ x, y, w, h float64 }

// layout places every chain and node.
type layout struct {
	g      *Graph
	chains []box
	nodes  []box
	w, h   float64
}

func nodeSize(n Node) (w, h float64) {
	longest := 0
	for _, l := range n.lines() {
		longest = max(longest, len([]rune(l)))
	}
	return float64(longest)*charWidth + 2*pad, float64(len(n.lines()))*lineHeight + pad
}

// place lays the chains out left to right in layers (a chain one layer
// right of every chain it reads from), each layer's chains top down near
// the middle of what they read, and the nodes of a chain top down as a
// tree of fused nodes.
func (g *Graph) place() *layout {
	l := &layout{g: g, chains: make([]box, len(g.Chains)), nodes: make([]box, len(g.Nodes))}
	// Sizes, and nodes relative to their chain's corner.
	for ci, c := range g.Chains {
		y := titleH
		w := 0.0
		for _, id := range c.Nodes {
			n := g.Nodes[id]
			nw, nh := nodeSize(n)
			x := pad + float64(n.Depth)*indent
			l.nodes[id] = box{x, y, nw, nh}
			y += nh + nodeGap
			w = max(w, x+nw+pad)
		}
		w = max(w, float64(len([]rune(g.Title(c))))*charWidth+2*pad)
		l.chains[ci] = box{0, 0, w, y - nodeGap + pad}
	}
	// Layers: the longest path of edges between chains.
	layer := make([]int, len(g.Chains))
	preds := make([][]Edge, len(g.Chains))
	for _, id := range topoHeads(g) {
		ci := g.Nodes[id].Chain
		for _, e := range g.Edges {
			if e.Fused || e.To != id {
				continue
			}
			from := g.Nodes[e.From].Chain
			layer[ci] = max(layer[ci], layer[from]+1)
			preds[ci] = append(preds[ci], e)
		}
	}
	layers := map[int][]int{}
	top := 0
	for ci, k := range layer {
		layers[k] = append(layers[k], ci)
		top = max(top, k)
	}
	x := margin
	for k := 0; k <= top; k++ {
		cs := layers[k]
		// The middle of what a chain reads, among chains placed already.
		want := map[int]float64{}
		for _, ci := range cs {
			sum, n := 0.0, 0
			for _, e := range preds[ci] {
				fb := l.nodeAbs(e.From)
				sum += fb.y + fb.h/2
				n++
			}
			if n > 0 {
				want[ci] = sum/float64(n) - (l.nodes[g.Chains[ci].Head].y + l.nodes[g.Chains[ci].Head].h/2)
			}
		}
		slices.SortStableFunc(cs, func(a, b int) int {
			wa, oka := want[a]
			wb, okb := want[b]
			switch {
			case oka && okb && wa < wb:
				return -1
			case oka && okb && wa > wb:
				return 1
			}
			return a - b
		})
		y := margin
		width := 0.0
		for _, ci := range cs {
			b := &l.chains[ci]
			b.x = x
			b.y = max(y, want[ci])
			y = b.y + b.h + chainGapY
			width = max(width, b.w)
			l.w = max(l.w, b.x+b.w+margin)
			l.h = max(l.h, b.y+b.h+margin)
		}
		x += width + chainGapX
	}
	return l
}

// topoHeads are the chain heads in topological order (the IR's).
func topoHeads(g *Graph) []int {
	var hs []int
	for _, n := range g.Nodes {
		if g.Chains[n.Chain].Head == n.ID {
			hs = append(hs, n.ID)
		}
	}
	return hs
}

// nodeAbs is node id's box on the canvas.
func (l *layout) nodeAbs(id int) box {
	c := l.chains[l.g.Nodes[id].Chain]
	n := l.nodes[id]
	return box{c.x + n.x, c.y + n.y, n.w, n.h}
}

// edgeColor tells partitionings apart.
func edgeColor(e Edge) string {
	switch e.Partition {
	case "hash":
		return "#b45309"
	case "rebalance":
		return "#7c3aed"
	case "broadcast":
		return "#be123c"
	}
	return "#4b5563"
}

// SVG draws the graph as one self-contained SVG file: no script, no font
// or image from elsewhere.
func (g *Graph) SVG() []byte {
	l := g.place()
	var b strings.Builder
	esc := html.EscapeString
	f := func(x float64) string { return fmt.Sprintf("%.1f", x) }
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="%d">`+"\n",
		f(l.w), f(l.h), f(l.w), f(l.h), fontSize)
	fmt.Fprintf(&b, "<title>pipeline %s</title>\n", esc(g.Name))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	for ci, c := range g.Chains {
		cb := l.chains[ci]
		fmt.Fprintf(&b, `<g class="chain" id="chain-%s">`+"\n", esc(g.Nodes[c.Head].Name))
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" rx="8" fill="#f8fafc" stroke="#94a3b8" stroke-dasharray="5 3"/>`+"\n", f(cb.x), f(cb.y), f(cb.w), f(cb.h))
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="#475569">%s</text>`+"\n", f(cb.x+pad), f(cb.y+15), esc(g.Title(c)))
		for _, id := range c.Nodes {
			n := g.Nodes[id]
			nb := l.nodeAbs(id)
			fill := "#ffffff"
			switch n.Kind {
			case "source":
				fill = "#ecfdf5"
			case "sink":
				fill = "#eff6ff"
			case "reduce", "aggregate", "process", "join":
				fill = "#fff7ed"
			}
			fmt.Fprintf(&b, `<g class="node" id="node-%s">`+"\n", esc(n.Name))
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" rx="5" fill="%s" stroke="#334155"/>`+"\n", f(nb.x), f(nb.y), f(nb.w), f(nb.h), fill)
			for k, line := range n.lines() {
				weight := ""
				if k == 0 {
					weight = ` font-weight="bold"`
				}
				fmt.Fprintf(&b, `<text x="%s" y="%s"%s>%s</text>`+"\n", f(nb.x+pad), f(nb.y+pad/2+lineHeight*float64(k)+12), weight, esc(line))
			}
			b.WriteString("</g>\n")
		}
		b.WriteString("</g>\n")
	}
	arrive := l.arrivals()
	for i, e := range g.Edges {
		from, to := l.nodeAbs(e.From), l.nodeAbs(e.To)
		dash := ""
		if e.Side != "" {
			dash = ` stroke-dasharray="6 3"`
		}
		if e.Fused {
			// A tree connector inside the chain: down from the input's
			// left, then right into the node.
			x := from.x + 8
			y1, y2 := from.y+from.h, to.y+to.h/2
			fmt.Fprintf(&b, `<path d="M%s,%s V%s H%s" fill="none" stroke="#64748b"%s marker-end="url(#arrow)"/>`+"\n", f(x), f(y1), f(y2), f(to.x), dash)
			continue
		}
		fc := l.chains[g.Nodes[e.From].Chain]
		x1, y1 := fc.x+fc.w, from.y+from.h/2
		x2, y2 := l.chains[g.Nodes[e.To].Chain].x, arrive[i]
		dx := (x2 - x1) / 2
		color := edgeColor(e)
		fmt.Fprintf(&b, `<path d="M%s,%s H%s C%s,%s %s,%s %s,%s" fill="none" stroke="%s" stroke-width="1.5"%s marker-end="url(#arrow)"/>`+"\n",
			f(from.x+from.w), f(y1), f(x1), f(x1+dx), f(y1), f(x2-dx), f(y2), f(x2), f(y2), color, dash)
		// The label near the arrow's end, where edges that fan out from
		// one node have parted and those that meet at one have not.
		label := e.Label()
		lw := float64(len([]rune(label)))*charWidth*0.85 + 6
		mx, my := bezier(0.78, x1, x1+dx, x2-dx, x2), bezier(0.78, y1, y1, y2, y2)
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="14" rx="3" fill="#ffffff" fill-opacity="0.85"/>`+"\n", f(mx-lw/2), f(my-10), f(lw))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="10" text-anchor="middle" fill="%s">%s</text>`+"\n", f(mx), f(my), color, esc(label))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// bezier is one coordinate of the cubic Bézier curve p0..p3 at t.
func bezier(t, p0, p1, p2, p3 float64) float64 {
	u := 1 - t
	return u*u*u*p0 + 3*u*u*t*p1 + 3*u*t*t*p2 + t*t*t*p3
}

// arrivals spreads the edges that arrive at one node over the height of
// its box, in the order of where they come from, so that their arrows and
// labels do not sit on top of each other. It returns each cross-chain
// edge's y where it arrives, by its index in g.Edges.
func (l *layout) arrivals() map[int]float64 {
	g := l.g
	in := map[int][]int{}
	for i, e := range g.Edges {
		if !e.Fused {
			in[e.To] = append(in[e.To], i)
		}
	}
	ys := map[int]float64{}
	for to, es := range in {
		slices.SortStableFunc(es, func(a, b int) int {
			ya, yb := l.nodeAbs(g.Edges[a].From).y, l.nodeAbs(g.Edges[b].From).y
			switch {
			case ya < yb:
				return -1
			case ya > yb:
				return 1
			}
			return 0
		})
		nb := l.nodeAbs(to)
		for k, i := range es {
			ys[i] = nb.y + nb.h*float64(k+1)/float64(len(es)+1)
		}
	}
	return ys
}
