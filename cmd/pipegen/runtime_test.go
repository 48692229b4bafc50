package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestToolImportsTheRuntime: every package of pipegen's module that
// generated code imports (the goldens' and examples/annotated's generated
// files) is a dependency of cmd/pipegen, so that a module with pipegen as
// a tool has in go.mod and go.sum all that pipegen build needs.
func TestToolImportsTheRuntime(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "golden", "*", "want", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join("..", "..", "examples", "annotated", "*_pipegen.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	if len(files) < 10 {
		t.Fatalf("found %d generated files, want the goldens' and examples/annotated's", len(files))
	}
	imported := map[string]string{} // package -> a file importing it
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/pipegen/pipegen/runtime") {
				imported[path] = file
			}
		}
	}
	if imported["github.com/pipegen/pipegen/runtime"] == "" {
		t.Fatalf("no generated file imports the runtime: %v", imported)
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	for path, file := range imported {
		if !deps[path] {
			t.Errorf("%s imports %s, which cmd/pipegen does not: add it to runtime.go", file, path)
		}
	}
}
