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
	Name   string // the pipeline's name
	Source string // the pipeline file, relative to the module root
	// GenVersion is the runtime contract the code is generated for.
	GenVersion int
}

// Render executes the named template.
func Render(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := all.ExecuteTemplate(&b, name, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
