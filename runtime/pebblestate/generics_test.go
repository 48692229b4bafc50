package pebblestate

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPebbleGenerics: a package that instantiates every generic type of
// pebblestate, as a generated program does, compiles none of Pebble's
// generic code. Go compiles an instantiated generic type's methods in
// every package that reaches the type, and a field or method of ours that
// named a Pebble type (*pebble.DB, *pebble.Options, even behind a
// pointer) made every program on the pebble backend compile about 690 of
// Pebble's functions again (its B-trees, swiss maps and caches: 0.9 CPU-s
// per compile). Generic code here sees the store through internal/kv.
func TestNoPebbleGenerics(t *testing.T) {
	// testdata/generics must name every exported generic type, or a new
	// one would go unchecked.
	program, err := os.ReadFile("testdata/generics/main.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				if ts.TypeParams != nil && ts.Name.IsExported() && !bytes.Contains(program, []byte("pebblestate."+ts.Name.Name+"[")) {
					t.Errorf("%s: testdata/generics/main.go does not instantiate %s: add it", fset.Position(ts.Pos()), ts.Name.Name)
				}
			}
		}
	}

	out, err := exec.Command("go", "list", "-export", "-f", "{{.Export}}", "./testdata/generics").Output()
	if err != nil {
		t.Fatalf("compile testdata/generics: %v\n%s", err, stderr(err))
	}
	nm, err := exec.Command("go", "tool", "nm", strings.TrimSpace(string(out))).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, stderr(err))
	}
	var text, foreign []string
	for line := range strings.Lines(string(nm)) {
		_, name, ok := strings.Cut(strings.TrimSpace(line), " T ")
		if !ok {
			continue
		}
		text = append(text, name)
		// The package's own functions and ours name this module; the
		// standard library's names have no domain.
		rest := strings.ReplaceAll(name, "github.com/pipegen/pipegen/", "")
		for _, domain := range []string{".com/", ".org/", ".in/", ".io/"} {
			if strings.Contains(rest, domain) {
				foreign = append(foreign, name)
				break
			}
		}
	}
	if len(text) < 100 {
		// The check would pass on a package that compiled nothing.
		t.Fatalf("testdata/generics compiled %d functions; want the instantiations of pebblestate's types:\n%s", len(text), nm)
	}
	if len(foreign) > 0 {
		t.Errorf("testdata/generics compiled %d functions of other modules (of %d), such as\n\t%s\n"+
			"a field or method signature of a pebblestate type reached a Pebble type: name internal/kv's interfaces instead",
			len(foreign), len(text), strings.Join(foreign[:min(len(foreign), 5)], "\n\t"))
	}
}

// stderr is the error output of a command that failed.
func stderr(err error) []byte {
	if e, ok := err.(*exec.ExitError); ok {
		return e.Stderr
	}
	return nil
}
