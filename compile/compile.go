// Package compile drives the compiler: front end, type check, code
// generation, and go build. cmd/pipegen is a thin shell around it.
//
// Generating returns the files and the diagnostics and writes nothing;
// writing (Commit) and building are separate steps, so that `pipegen check`
// is cheap and nothing is half-written when a pipeline has errors.
package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/dsl"
	"github.com/pipegen/pipegen/ir"
)

// Result is a compiled pipeline: its IR, its generated files, and the
// warnings the compiler printed about it (nil or empty when none).
type Result struct {
	IR       *ir.Pipeline
	Files    []codegen.File
	Warnings *diag.List
	// SourceDir is where the last Build kept the generated files, in the
	// user's cache; empty before, or when there was no cache to keep
	// them in.
	SourceDir string
}

// Stderr is where the compiler prints its warnings ("file:line:col:
// warning: ..."), which stop nothing: Check, Generate, CheckPackage and
// GeneratePackage print them once the pipeline has no errors. (With errors,
// the *diag.List they return holds the warnings too.)
var Stderr io.Writer = os.Stderr

// warn prints the warnings of a list that holds no errors, with paths
// relative to the working directory.
func warn(l *diag.List) {
	if l.Len() > 0 {
		wd, _ := os.Getwd()
		fmt.Fprint(Stderr, l.Format(wd))
	}
}

// Check parses and type-checks the pipeline file at path. The returned
// error is a *diag.List when the pipeline has problems.
func Check(path string) (*ir.Pipeline, error) {
	p, _, err := check(path)
	return p, err
}

// check is Check, returning the warnings it printed too.
func check(path string) (*ir.Pipeline, *diag.List, error) {
	data, err := readPipeline(path)
	if err != nil {
		return nil, nil, err
	}
	spec, diags := dsl.ParseYAML(path, data)
	if spec.Version == 0 {
		// Not YAML, or another version: nothing more can be checked.
		return nil, nil, diags
	}
	// Resolve even when the structure has problems, so that the user sees
	// every problem at once; the resolver skips what it cannot check.
	p, more := dsl.Resolve(spec)
	diags.Append(more)
	if diags.HasErrors() {
		// Warnings are about a pipeline that compiles.
		return nil, nil, diags.Errors()
	}
	warn(diags)
	return p, diags, nil
}

// MaxPipelineSize is the size of the largest pipeline file pipegen reads:
// a pipeline is a few kilobytes; a larger file is the wrong one.
const MaxPipelineSize = 4 << 20

// readPipeline reads the pipeline file at path, up to MaxPipelineSize
// bytes: /dev/zero or a log named by mistake gets a message, not all the
// memory.
func readPipeline(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read pipeline: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPipelineSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read pipeline: %w", err)
	}
	if len(data) > MaxPipelineSize {
		return nil, fmt.Errorf("cannot read pipeline: %s is larger than %d MiB: is it the pipeline file?", path, MaxPipelineSize>>20)
	}
	return data, nil
}

// Generate compiles the pipeline file at path into Go source, whose
// headers record opts.
func Generate(path string, opts Options) (*Result, error) {
	p, warnings, err := check(path)
	if err != nil {
		return nil, err
	}
	if opts.StateBackend != "" {
		p.StateBackend = opts.StateBackend
	}
	files, err := codegen.Generate(p, opts.codegen())
	if err != nil {
		return nil, err
	}
	return &Result{IR: p, Files: files, Warnings: warnings}, nil
}

// DumpIR renders the IR as indented JSON, for debugging and for comparing
// front ends.
func DumpIR(p *ir.Pipeline) ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Commit writes the generated files into dir, each through a temporary file
// and a rename, so that a reader never sees a half-written file.
func (r *Result) Commit(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range r.Files {
		if err := writeFileAtomic(filepath.Join(dir, f.Name), f.Content); err != nil {
			return err
		}
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// IsDiagnostics reports whether err lists problems in the pipeline (as
// opposed to a failure of the tool), and returns them.
func IsDiagnostics(err error) (*diag.List, bool) {
	var l *diag.List
	ok := errors.As(err, &l)
	return l, ok
}
