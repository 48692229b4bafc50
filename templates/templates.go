// Package templates holds the fixed scaffolding of generated programs: the
// parts that are the same for every pipeline but for a few names. codegen
// emits everything that depends on the pipeline's graph with jennifer and
// fills these in with text/template.
package templates

import (
	"bytes"
	"embed"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

var all = template.Must(template.ParseFS(files, "*.tmpl"))

// Main is the data of main.go.tmpl.
type Main struct {
	Header string // the generated-code header, lines ending in a newline
	Name   string // the pipeline's name
	// GenVersion is the runtime contract the code is generated for.
	GenVersion int
	// Config and Build are the names pipeline.go declares the compiled
	// settings and the build function as.
	Config, Build string
}

// Render executes the named template.
func Render(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := all.ExecuteTemplate(&b, name, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
