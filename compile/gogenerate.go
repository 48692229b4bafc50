package compile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/dsl"
	"github.com/pipegen/pipegen/ir"
)

// Pipelines written as //pipegen: directives are generated into the Go
// package that holds them, the way go generate tools work: `pipegen
// generate` runs in the package's directory, writes a file per pipeline
// there (codegen.PackageFile) and, when asked, a main package per pipeline
// (codegen.CmdFile). It owns the files it writes, recognised by their
// first line (codegen.Header): it overwrites only those, and removes the
// ones it no longer produces.

// PackageOptions shape GeneratePackage.
type PackageOptions struct {
	Options // what the headers record
	// Cmd also generates cmd/<name>/main.go for every pipeline.
	Cmd bool
}

// Package is an annotated Go package, compiled.
type Package struct {
	// Dir is the package's directory, as given.
	Dir     string
	PkgPath string
	// Pipelines holds each pipeline's IR and files, in the order declared.
	Pipelines []*Result
	// Files are every file generated into Dir, Name slash-separated and
	// relative to Dir.
	Files []codegen.File

	annotations *dsl.Annotations
	// test is set by generate -test: the files are the test drivers'.
	test bool
}

// ChangeKind says what Commit does to a file.
type ChangeKind string

// The kinds of change.
const (
	Create ChangeKind = "new"
	Update ChangeKind = "changed"
	Remove ChangeKind = "no longer generated"
)

// Change is a file that is not as the compiler would generate it.
type Change struct {
	Path    string // relative to the package directory, slash-separated
	Kind    ChangeKind
	Content []byte // for Create and Update
}

// CheckPackage parses and type-checks the pipelines annotated in the Go
// package in dir. The error is a *diag.List when they have problems.
func CheckPackage(dir string) ([]*ir.Pipeline, error) {
	pk, err := checkPackage(dir)
	if err != nil {
		return nil, err
	}
	var ps []*ir.Pipeline
	for _, r := range pk.Pipelines {
		ps = append(ps, r.IR)
	}
	return ps, nil
}

func checkPackage(dir string) (*Package, error) {
	a, diags := dsl.ParseAnnotations(dir)
	if a == nil {
		return nil, diags
	}
	pk := &Package{Dir: dir, PkgPath: a.PkgPath}
	for _, s := range a.Specs {
		// Resolve even when the directives have problems, so that every
		// problem is reported at once.
		p, more := a.Resolve(s)
		diags.Append(more)
		if p != nil {
			pk.Pipelines = append(pk.Pipelines, &Result{IR: p})
		}
	}
	if diags.HasErrors() {
		// Warnings are about a pipeline that compiles.
		return nil, diags.Errors()
	}
	warn(diags)
	pk.annotations = a
	return pk, nil
}

// GeneratePackage compiles the pipelines annotated in the Go package in
// dir into files of that package. It writes nothing: Plan and Commit do.
// A package without any //pipegen:pipeline is an error unless it holds
// generated files to remove.
func GeneratePackage(dir string, opts PackageOptions) (*Package, error) {
	pk, err := checkPackage(dir)
	if err != nil {
		return nil, err
	}
	declared := func(name string) bool {
		_, ok := pk.annotations.Declared(name)
		return ok
	}
	copts := opts.codegen()
	copts.Package, copts.Cmd, copts.Declared = true, opts.Cmd, declared
	pk.test = opts.Test
	for _, r := range pk.Pipelines {
		files, err := codegen.Generate(r.IR, copts)
		if err != nil {
			return nil, err
		}
		r.Files = files
		pk.Files = append(pk.Files, files...)
	}
	if err := pk.checkNames(); err != nil {
		return nil, err
	}
	if len(pk.Pipelines) == 0 {
		owned, err := pk.owned()
		if err != nil {
			return nil, err
		}
		if len(owned) == 0 {
			return nil, fmt.Errorf("package %s has no //pipegen:pipeline directive: nothing to generate (see docs/annotations.md)", pk.PkgPath)
		}
	}
	return pk, nil
}

// checkNames makes sure that the generated files do not take a name the
// user's package declares, nor the same name twice: every package-level
// name of a generated file (codegen gives all but the entry point other
// names than the user's), and the predeclared names it uses (a package
// that declares its own len would change what the generated code calls).
func (pk *Package) checkNames() error {
	diags := &diag.List{}
	first := map[string]string{} // name -> pipeline that generated it
	for _, r := range pk.Pipelines {
		src := r.Files[0].Content
		f, err := parser.ParseFile(token.NewFileSet(), r.Files[0].Name, src, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Files[0].Name, err)
		}
		file := r.Files[0].Name
		declares := func(name, what string) {
			if pos, ok := pk.annotations.Declared(name); ok {
				diags.Add(pos, "%s is %s the code generated for pipeline %s (%s) needs: rename yours", name, what, r.IR.Name, file)
			}
		}
		for _, name := range topLevel(f) {
			if prev, dup := first[name]; dup && prev != r.IR.Name {
				diags.Add(pk.pipelinePos(r.IR.Name), "pipelines %s and %s both generate %s: rename one of them", prev, r.IR.Name, name)
			}
			first[name] = r.IR.Name
			declares(name, "a name")
		}
		for _, name := range predeclared(src) {
			declares(name, "a predeclared name")
		}
	}
	return diags.Err()
}

// pipelinePos is where pipeline name is declared.
func (pk *Package) pipelinePos(name string) diag.Pos {
	for _, s := range pk.annotations.Specs {
		if s.Name.V == name {
			return s.Name.Pos
		}
	}
	return diag.Pos{File: pk.Dir}
}

// topLevel lists the names a file declares at package level.
func topLevel(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// predeclared lists the predeclared names (len, new, int, ...) that a
// file's code refers to.
func predeclared(src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return nil
	}
	var names []string
	for _, id := range f.Unresolved {
		if types.Universe.Lookup(id.Name) != nil && !slices.Contains(names, id.Name) {
			names = append(names, id.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Plan compares the generated files with the package directory: the
// files to create or update, and the generated files to remove. It fails,
// writing nothing, when a file to write exists and pipegen does not own it.
func (pk *Package) Plan() ([]Change, error) {
	diags := &diag.List{}
	var changes []Change
	produced := map[string]bool{}
	for _, f := range pk.Files {
		produced[f.Name] = true
		full := filepath.Join(pk.Dir, filepath.FromSlash(f.Name))
		data, err := os.ReadFile(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, Change{Path: f.Name, Kind: Create, Content: f.Content})
		case err != nil:
			return nil, err
		case !pk.owns(f.Name, data):
			if firstLine(data) == codegen.Header {
				diags.Add(diag.Pos{File: full, Line: 1}, "pipegen generated this file for another package, not for %s: remove it, or rename the pipeline", pk.PkgPath)
			} else {
				diags.Add(diag.Pos{File: full, Line: 1}, "the file exists and pipegen did not generate it (its first line is not %q), so pipegen does not overwrite it: rename or remove it, or rename the pipeline", codegen.Header)
			}
		case !bytes.Equal(data, f.Content):
			changes = append(changes, Change{Path: f.Name, Kind: Update, Content: f.Content})
		}
	}
	if diags.Len() > 0 {
		return nil, diags
	}
	owned, err := pk.owned()
	if err != nil {
		return nil, err
	}
	for _, name := range owned {
		if !produced[name] {
			changes = append(changes, Change{Path: name, Kind: Remove})
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return changes, nil
}

// Commit brings the package directory up to date: it writes the new and
// changed files (each through a temporary file and a rename) and removes
// the generated files no pipeline produces any more, with their cmd/NAME
// directory when it is left empty. It returns what it changed, also when
// it fails on the way.
func (pk *Package) Commit() ([]Change, error) {
	changes, err := pk.Plan()
	if err != nil {
		return nil, err
	}
	for i, c := range changes {
		full := filepath.Join(pk.Dir, filepath.FromSlash(c.Path))
		if c.Kind == Remove {
			if err := os.Remove(full); err != nil {
				return changes[:i], err
			}
			// cmd/NAME, then cmd, when empty; os.Remove leaves a directory
			// with files in it alone.
			for d := filepath.Dir(full); d != filepath.Clean(pk.Dir); d = filepath.Dir(d) {
				if os.Remove(d) != nil {
					break
				}
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return changes[:i], err
		}
		if err := writeFileAtomic(full, c.Content); err != nil {
			return changes[:i], err
		}
	}
	return changes, nil
}

// owned lists the files of the package directory that pipegen generated
// for this package: *_pipegen.go files and cmd/*/main.go files that start
// with codegen.Header (a cmd main must also import the package).
func (pk *Package) owned() ([]string, error) {
	var names []string
	patterns := []string{codegen.PackageFile("*"), codegen.CmdFile("*")}
	if pk.test {
		// generate -test writes, and owns, the test files only.
		patterns = []string{codegen.TestFile("*")}
	}
	for _, pattern := range patterns {
		matches, err := filepath.Glob(filepath.Join(pk.Dir, filepath.FromSlash(pattern)))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			rel, err := filepath.Rel(pk.Dir, m)
			if err != nil {
				return nil, err
			}
			rel = filepath.ToSlash(rel)
			data, err := os.ReadFile(m)
			if err != nil {
				return nil, err
			}
			if pk.owns(rel, data) {
				names = append(names, rel)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// owns reports whether data, the content of the file name in the package
// directory, is a file pipegen generated for this package.
func (pk *Package) owns(name string, data []byte) bool {
	if firstLine(data) != codegen.Header {
		return false
	}
	if !strings.HasPrefix(name, "cmd/") {
		return true
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, data, parser.ImportsOnly)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool {
		p, err := strconv.Unquote(s.Path.Value)
		return err == nil && p == pk.PkgPath
	})
}

func firstLine(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	if sc.Scan() {
		return strings.TrimSuffix(sc.Text(), "\r")
	}
	return ""
}

// Stale compares the generated files of a pipeline file with those in
// dir, as Commit(dir) would write them: the files that are missing or
// differ (generate -check for a YAML pipeline).
func (r *Result) Stale(dir string) ([]Change, error) {
	var changes []Change
	for _, f := range r.Files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, Change{Path: f.Name, Kind: Create, Content: f.Content})
		case err != nil:
			return nil, err
		case !bytes.Equal(data, f.Content):
			changes = append(changes, Change{Path: f.Name, Kind: Update, Content: f.Content})
		}
	}
	return changes, nil
}
