package golden

import (
	"path/filepath"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/graph"
	"github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/ir"
)

// graphCases are the cases whose job graph `pipegen graph` draws into
// CASE/graph/graph.dot, graph.mmd and graph.svg: a word count, a fan-out
// with its own parallelisms, event time with side outputs and joins, a
// union, dead letters, a struct key, and a package's directives.
var graphCases = []string{"wordcount", "fanout", "eventtime", "jsonl-union", "dead-letter", "csv-reduce", "annotated-shop", "joins", "triggers"}

func TestGraph(t *testing.T) {
	for _, name := range graphCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var p *ir.Pipeline
			var err error
			if name == "annotated-shop" {
				var ps []*ir.Pipeline
				if ps, err = compile.CheckPackage(name); err == nil {
					p = ps[0]
				}
			} else {
				p, err = compile.Check(filepath.Join(name, "pipeline.yaml"))
			}
			if err != nil {
				t.Fatal(err)
			}
			g := graph.Build(p)
			dir := filepath.Join(name, "graph")
			goldenfile.Check(t, filepath.Join(dir, "graph.dot"), g.DOT())
			goldenfile.Check(t, filepath.Join(dir, "graph.mmd"), g.Mermaid())
			goldenfile.Check(t, filepath.Join(dir, "graph.svg"), g.SVG())
		})
	}
}
