package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pipegen/pipegen/ir"
)

// printFused lists, for `pipegen check`, the nodes that run fused
// together: each chain of more than one node, head first, runs in one
// goroutine per subtask at its head's parallelism, its records passed by
// plain calls (docs/dsl.md, Partitioning and fusion).
func printFused(w io.Writer, p *ir.Pipeline) {
	for _, c := range p.Chains() {
		if len(c) < 2 {
			continue
		}
		names := make([]string, len(c))
		for i, n := range c {
			names[i] = n.Name
		}
		fmt.Fprintf(w, "  fused, one goroutine per subtask of %q: %s\n", c[0].Name, strings.Join(names, ", "))
	}
}
