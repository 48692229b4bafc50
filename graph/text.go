package graph

import (
	"fmt"
	"strings"
)

// DOT writes the graph in Graphviz's language: a cluster per chain, edges
// labelled with their partitioning (`dot -Tsvg` draws it).
func (g *Graph) DOT() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(g.Name))
	b.WriteString("\trankdir=LR;\n")
	b.WriteString("\tnode [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("\tedge [fontname=\"Helvetica\", fontsize=10];\n")
	for i, c := range g.Chains {
		fmt.Fprintf(&b, "\tsubgraph cluster_%d {\n", i)
		fmt.Fprintf(&b, "\t\tlabel=%s;\n\t\tstyle=dashed;\n", dotQuote(g.Title(c)))
		for _, id := range c.Nodes {
			n := g.Nodes[id]
			fmt.Fprintf(&b, "\t\tn%d [label=%s];\n", id, dotQuote(strings.Join(n.lines(), "\n")))
		}
		b.WriteString("\t}\n")
	}
	for _, e := range g.Edges {
		style := ""
		if e.Fused {
			style = ", style=dashed"
		}
		fmt.Fprintf(&b, "\tn%d -> n%d [label=%s%s];\n", e.From, e.To, dotQuote(e.Label()), style)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// lines are what a node's box says: its name and kind, then its details.
func (n Node) lines() []string {
	return append([]string{n.Name + " (" + n.Kind + ")"}, n.Details...)
}

// dotQuote quotes s as a DOT string; a line break becomes \n.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// Mermaid writes the graph as a Mermaid flowchart: a subgraph per chain,
// edges labelled with their partitioning. GitHub renders it in a
// ```mermaid block.
func (g *Graph) Mermaid() []byte {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for i, c := range g.Chains {
		fmt.Fprintf(&b, "  subgraph c%d[%s]\n", i, mermaidQuote(g.Title(c)))
		for _, id := range c.Nodes {
			n := g.Nodes[id]
			lines := n.lines()
			for k := range lines {
				lines[k] = mermaidEscape(lines[k])
			}
			lines[0] = "<b>" + lines[0] + "</b>"
			fmt.Fprintf(&b, "    n%d[\"%s\"]\n", id, strings.Join(lines, "<br/>"))
		}
		b.WriteString("  end\n")
	}
	for _, e := range g.Edges {
		arrow := "-->"
		if e.Fused {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "  n%d %s|%s| n%d\n", e.From, arrow, mermaidQuote(e.Label()), e.To)
	}
	return []byte(b.String())
}

// mermaidQuote quotes a label for Mermaid.
func mermaidQuote(s string) string { return `"` + mermaidEscape(s) + `"` }

// mermaidEscape writes the characters Mermaid would read as syntax as
// entity codes.
func mermaidEscape(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;")
	return r.Replace(s)
}
