package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/graph"
	"github.com/pipegen/pipegen/ir"
)

// graphFormats are the formats of pipegen graph, each with what writes it.
var graphFormats = map[string]func(*graph.Graph) []byte{
	"dot":     (*graph.Graph).DOT,
	"mermaid": (*graph.Graph).Mermaid,
	"svg":     (*graph.Graph).SVG,
}

func graphFlags(fs *flag.FlagSet) func(*flag.FlagSet, io.Writer, io.Writer) error {
	format := fs.String("format", "dot", "`FORMAT` of the picture: dot (Graphviz), mermaid (renders in GitHub markdown) or svg (self-contained)")
	out := fs.String("o", "", "write the picture to `FILE` instead of the standard output")
	pkg := fs.String("pkg", "", pkgUsage)
	name := fs.String("pipeline", "", "the pipeline to draw, by `NAME`, when the package has several")
	return func(fs *flag.FlagSet, stdout, _ io.Writer) error {
		write, ok := graphFormats[*format]
		if !ok {
			return wrapUsage(fmt.Errorf("-format wants dot, mermaid or svg, got %q", *format))
		}
		path, dir, err := target(fs, *pkg)
		if err != nil {
			return err
		}
		var p *ir.Pipeline
		if path != "" {
			if *name != "" {
				return wrapUsage(fmt.Errorf("-pipeline is for the //pipegen: directives of a package: a pipeline file holds one pipeline"))
			}
			if p, err = compile.Check(path); err != nil {
				return err
			}
		} else if p, err = packagePipeline(dir, *name); err != nil {
			return err
		}
		pic := write(graph.Build(p))
		if *out == "" {
			_, err = stdout.Write(pic)
			return err
		}
		return os.WriteFile(*out, pic, 0o644)
	}
}

// packagePipeline is the pipeline of the package in dir that graph draws:
// the one named, or its only one.
func packagePipeline(dir, name string) (*ir.Pipeline, error) {
	ps, err := compile.CheckPackage(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range ps {
		if p.Name == name || name == "" && len(ps) == 1 {
			return p, nil
		}
		names = append(names, p.Name)
	}
	switch {
	case len(ps) == 0:
		return nil, fmt.Errorf("the package in %s has no //pipegen:pipeline directive: nothing to draw (see docs/annotations.md)", dir)
	case name == "":
		return nil, wrapUsage(fmt.Errorf("the package in %s has %d pipelines: name one with -pipeline (%s)", dir, len(ps), strings.Join(names, ", ")))
	}
	return nil, fmt.Errorf("the package in %s has no pipeline %s; it has %s", dir, name, strings.Join(names, ", "))
}
