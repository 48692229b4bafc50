package dsl

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
)

// userPackage is the user's Go package, loaded with its types.
type userPackage struct {
	pkg *packages.Package
	// moduleDir is the root of the user's module: IR positions are
	// relative to it.
	moduleDir string
	// rootPkg is github.com/pipegen/pipegen as the user's package imports
	// it (nil when it does not), for pipegen.Window.
	rootPkg *types.Package
	// decls maps the package's functions to their declarations (made by
	// funcDecls when first asked).
	decls map[*types.Func]*ast.FuncDecl
}

// pipegenPath is the import path of the package user code uses for the
// types the runtime hands to it (pipegen.Window).
const pipegenPath = "github.com/pipegen/pipegen"

// loadMode asks go/packages for exactly what the checks use: names and
// types of the user's package, positions, and the module it lives in.
//
// NeedSyntax makes go/packages type-check the package from source rather
// than read export data, which holds only exported names: a pipeline that
// names an unexported function gets "must be exported", not "unknown".
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule

// generatedTag is the build tag that excludes generated files
// (codegen.BuildTag; dsl does not import codegen).
const generatedTag = "pipegen"

// loadConfig is the go/packages configuration of a load from dir. The
// tag leaves out the files pipegen generated into the package
// (//go:build !pipegen): a stale one must not stop the next generate.
func loadConfig(dir string) *packages.Config {
	return &packages.Config{Mode: loadMode, Dir: dir, Tests: false, BuildFlags: []string{"-tags=" + generatedTag}}
}

// packageCache keeps loaded packages by directory once CachePackages has
// been called, each with its folder's stamp when it was loaded.
var packageCache struct {
	sync.Mutex
	on   bool
	pkgs map[string]cachedPackage
}

type cachedPackage struct {
	pkg   *packages.Package
	stamp string
}

// CachePackages makes every later load of a package directory in this
// process reuse what the first load of it found, for as long as the
// folder's stamp (folderStamp) stays the same. A load runs go list,
// which hashes the whole dependency graph again (about 0.25 s of CPU):
// the golden tests, which compile each case's package several times,
// spent more than half of their CPU there. Only for programs during
// whose run what the packages import does not change: a test that
// rewrites a package's own files, or its module's go.mod, gets it
// loaded again, but a change to another package it imports goes unseen.
func CachePackages() {
	packageCache.Lock()
	defer packageCache.Unlock()
	if !packageCache.on {
		packageCache.on = true
		packageCache.pkgs = map[string]cachedPackage{}
	}
}

// folderStamp names what a load of the package in dir reads that a
// program may change while it runs: the names, sizes and modification
// times of the folder's files, those of the go.mod of its module, and
// the go command's settings from the environment. "" when the folder
// cannot be read: nothing is kept for it then.
func folderStamp(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, v := range []string{"GOFLAGS", "GOOS", "GOARCH", "GOWORK", "CGO_ENABLED"} {
		fmt.Fprintf(&b, "%s=%s\x00", v, os.Getenv(v))
	}
	stamp := func(path string, fi os.FileInfo) {
		fmt.Fprintf(&b, "%s %d %d\x00", path, fi.Size(), fi.ModTime().UnixNano())
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			stamp(e.Name(), fi)
		}
	}
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			stamp(filepath.Join(d, "go.mod"), fi)
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	return b.String()
}

// Preload loads the packages in dirs with one go list, for the loads
// after it (it calls CachePackages). A package with errors is left to be
// loaded, and reported, by the compile that names it.
func Preload(dirs ...string) error {
	CachePackages()
	if len(dirs) == 0 {
		return nil
	}
	patterns := make([]string, len(dirs))
	stamps := map[string]string{}
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		patterns[i] = abs
		// Taken before the load: a file changed during it makes the
		// next load load the package again.
		stamps[abs] = folderStamp(abs)
	}
	pkgs, err := packages.Load(loadConfig(patterns[0]), patterns...)
	if err != nil {
		return fmt.Errorf("preload %d Go packages: %w", len(dirs), err)
	}
	packageCache.Lock()
	defer packageCache.Unlock()
	for _, pkg := range pkgs {
		if len(pkg.Errors) == 0 && pkg.Types != nil && len(pkg.GoFiles) > 0 {
			dir := filepath.Dir(pkg.GoFiles[0])
			if stamp := stamps[dir]; stamp != "" {
				packageCache.pkgs[dir] = cachedPackage{pkg, stamp}
			}
		}
	}
	return nil
}

// cached returns, when caching is on and pattern names a directory (not
// an import path), that directory's absolute path, the cache's key, its
// stamp, and the package kept for it if its stamp is the same.
func cached(dir, pattern string) (key, stamp string, pkg *packages.Package, cache bool) {
	if !(pattern == "." || pattern == ".." || strings.HasPrefix(pattern, "./") || strings.HasPrefix(pattern, "../") || filepath.IsAbs(pattern)) {
		return "", "", nil, false
	}
	packageCache.Lock()
	on := packageCache.on
	packageCache.Unlock()
	if !on {
		return "", "", nil, false
	}
	key, err := filepath.Abs(filepath.Join(dir, pattern))
	if err != nil {
		return "", "", nil, false
	}
	stamp = folderStamp(key)
	if stamp == "" {
		return "", "", nil, false
	}
	packageCache.Lock()
	defer packageCache.Unlock()
	if c, ok := packageCache.pkgs[key]; ok && c.stamp == stamp {
		return key, stamp, c.pkg, true
	}
	return key, stamp, nil, true
}

// loadPackage loads the package named by pattern (a directory relative to
// dir, or an import path) and reports its errors at their Go positions.
func loadPackage(dir, pattern string, at diag.Pos, rep *reporter) *userPackage {
	key, stamp, kept, cache := cached(dir, pattern)
	pkgs := []*packages.Package{kept}
	if kept == nil {
		var err error
		pkgs, err = packages.Load(loadConfig(dir), pattern)
		if err != nil {
			rep.report(at, diag.GoPackage, "cannot load Go package %q: %v", pattern, err)
			return nil
		}
		if cache && len(pkgs) == 1 && len(pkgs[0].Errors) == 0 && pkgs[0].Types != nil {
			packageCache.Lock()
			packageCache.pkgs[key] = cachedPackage{pkgs[0], stamp}
			packageCache.Unlock()
		}
	}
	if len(pkgs) != 1 {
		rep.report(at, diag.GoPackage, "package %q names %d Go packages, want exactly one", pattern, len(pkgs))
		return nil
	}
	pkg := pkgs[0]
	if len(pkg.Errors) > 0 {
		for _, e := range pkg.Errors {
			// The go command's compiler output comes as one error without
			// a position ("# path\n./p.go:5:44: ..."), which the type
			// checker reports again, with positions.
			if e.Kind == packages.ListError && e.Pos == "" && strings.HasPrefix(e.Msg, "# ") && len(pkg.Errors) > 1 {
				continue
			}
			rep.report(goErrorPos(e.Pos, at), diag.GoPackage, "%s", e.Msg)
		}
		rep.report(at, diag.GoPackage, "package %q has errors: fix them, then compile the pipeline again", pattern)
		return nil
	}
	if pkg.Types == nil {
		rep.report(at, diag.GoPackage, "package %q has no Go files", pattern)
		return nil
	}
	if pkg.Name == "main" {
		rep.report(at, diag.GoPackage, "package %s is a main package, which the generated program cannot import: put the pipeline's types and functions in a package of their own", pkg.PkgPath)
		return nil
	}
	up := &userPackage{pkg: pkg}
	if pkg.Module != nil {
		up.moduleDir = pkg.Module.Dir
	}
	for _, imp := range pkg.Types.Imports() {
		if imp.Path() == pipegenPath {
			up.rootPkg = imp
		}
	}
	return up
}

// goErrorPos parses the "file:line:col" of a go/packages error.
func goErrorPos(s string, fallback diag.Pos) diag.Pos {
	if s == "" || s == "-" {
		return fallback
	}
	parts := strings.Split(s, ":")
	p := diag.Pos{File: parts[0]}
	if len(parts) > 1 {
		fmt.Sscan(parts[1], &p.Line)
	}
	if len(parts) > 2 {
		fmt.Sscan(parts[2], &p.Col)
	}
	return p
}

// position returns a Go position with the file relative to the working
// directory, as diagnostics print it (positions also appear inside
// messages, where diag.List cannot shorten them).
func (u *userPackage) position(pos token.Pos) diag.Pos {
	p := u.pkg.Fset.Position(pos)
	file := p.Filename
	if wd, err := os.Getwd(); err == nil && filepath.IsAbs(file) {
		if rel, err := filepath.Rel(wd, file); err == nil {
			file = rel
		}
	}
	return diag.Pos{File: file, Line: p.Line, Col: p.Column}
}

// irPos makes a position relative to the module root.
func (u *userPackage) irPos(p diag.Pos) ir.Pos {
	return ir.Pos{File: u.rel(p.File), Line: p.Line, Col: p.Col}
}

func (u *userPackage) rel(file string) string {
	if file == "" {
		return ""
	}
	abs, err := filepath.Abs(file)
	if err != nil || u.moduleDir == "" {
		return filepath.ToSlash(file)
	}
	rel, err := filepath.Rel(u.moduleDir, abs)
	if err != nil {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(rel)
}

// qualifier prints the user's own types unqualified and others by package
// name, the way the user reads them in their code.
func (u *userPackage) qualifier(p *types.Package) string {
	if p == u.pkg.Types {
		return ""
	}
	return p.Name()
}

func (u *userPackage) typeString(t types.Type) string {
	return types.TypeString(t, u.qualifier)
}

// lookupFunc finds a package-level function of the user's package.
func (u *userPackage) lookupFunc(name Str, rep *reporter) *types.Func {
	if !name.Set {
		return nil // a value of the wrong shape, reported by the front end
	}
	obj := u.pkg.Types.Scope().Lookup(name.V)
	if obj == nil {
		rep.report(name.Pos, diag.Function, "unknown function %q in package %s%s", name.V, u.pkg.PkgPath, suggest(name.V, u.names(func(o types.Object) bool { _, ok := o.(*types.Func); return ok })))
		return nil
	}
	fn, ok := obj.(*types.Func)
	if !ok {
		rep.report(name.Pos, diag.Function, "%s is a %s, not a function (declared at %s)", name.V, objectKind(obj), u.position(obj.Pos()))
		return nil
	}
	if !fn.Exported() {
		rep.report(name.Pos, diag.Function, "function %s must be exported (start with a capital letter): the generated program calls it from another package", name.V)
		return nil
	}
	if sig := fn.Type().(*types.Signature); sig.TypeParams().Len() > 0 {
		rep.report(name.Pos, diag.Function, "function %s is generic: name a function with concrete types (declare a non-generic wrapper)", name.V)
		return nil
	}
	return fn
}

// lookupType finds a type of the user's package.
func (u *userPackage) lookupType(name Str, rep *reporter) types.Type {
	if !name.Set {
		return nil // a value of the wrong shape, reported by the front end
	}
	obj := u.pkg.Types.Scope().Lookup(name.V)
	if obj == nil {
		rep.report(name.Pos, diag.Type, "unknown type %q in package %s%s", name.V, u.pkg.PkgPath, suggest(name.V, u.names(func(o types.Object) bool { _, ok := o.(*types.TypeName); return ok })))
		return nil
	}
	tn, ok := obj.(*types.TypeName)
	if !ok {
		rep.report(name.Pos, diag.Type, "%s is a %s, not a type", name.V, objectKind(obj))
		return nil
	}
	if !tn.Exported() {
		rep.report(name.Pos, diag.Type, "type %s must be exported (start with a capital letter): the generated program uses it from another package", name.V)
		return nil
	}
	return tn.Type()
}

func (u *userPackage) names(keep func(types.Object) bool) []string {
	var names []string
	scope := u.pkg.Types.Scope()
	for _, n := range scope.Names() {
		if keep(scope.Lookup(n)) {
			names = append(names, n)
		}
	}
	return names
}

func objectKind(obj types.Object) string {
	switch obj.(type) {
	case *types.Var:
		return "variable"
	case *types.Const:
		return "constant"
	case *types.TypeName:
		return "type"
	case *types.Func:
		return "function"
	}
	return "name"
}

// typeConverter turns go/types types into IR types.
type typeConverter struct {
	u *userPackage
	// expanding holds the defined types being converted, so that a
	// recursive type (a tree of pointers to itself) ends.
	expanding map[*types.TypeName]bool
}

func (c *typeConverter) convert(t types.Type) *ir.Type {
	switch t := t.(type) {
	case *types.Alias:
		return c.convert(types.Unalias(t))
	case *types.Basic:
		switch {
		case t.Info()&(types.IsBoolean|types.IsInteger|types.IsFloat|types.IsString) != 0 && t.Kind() != types.UnsafePointer && t.Info()&types.IsUntyped == 0:
			return &ir.Type{Kind: ir.BasicType, Name: t.Name()}
		}
		return &ir.Type{Kind: ir.OpaqueType, Expr: t.Name()}
	case *types.Named:
		obj := t.Obj()
		out := &ir.Type{Kind: ir.NamedType, Name: obj.Name()}
		if obj.Pkg() != nil {
			out.PkgPath = obj.Pkg().Path()
			out.PkgName = obj.Pkg().Name()
		}
		if isPipegenType(t, "MapState") && t.TypeArgs().Len() == 2 {
			// A map state field of a process's state: its entries are
			// state of their own (codegen), not part of the struct's
			// value. No fields: the serializers see none.
			out.TypeArgs = []*ir.Type{c.convert(t.TypeArgs().At(0)), c.convert(t.TypeArgs().At(1))}
			out.Underlying = &ir.Type{Kind: ir.StructType}
			return out
		}
		if t.TypeArgs().Len() > 0 {
			return &ir.Type{Kind: ir.OpaqueType, Expr: c.u.typeString(t)}
		}
		out.Stringer = hasStringMethod(t)
		out.JSONMethods = hasJSONMethods(t)
		if c.expanding == nil {
			c.expanding = map[*types.TypeName]bool{}
		}
		if !c.expanding[obj] && !isTimeType(t) {
			c.expanding[obj] = true
			out.Underlying = c.convert(t.Underlying())
			delete(c.expanding, obj)
		}
		return out
	case *types.Pointer:
		return &ir.Type{Kind: ir.PointerType, Elem: c.convert(t.Elem())}
	case *types.Slice:
		return &ir.Type{Kind: ir.SliceType, Elem: c.convert(t.Elem())}
	case *types.Array:
		return &ir.Type{Kind: ir.ArrayType, Len: t.Len(), Elem: c.convert(t.Elem())}
	case *types.Map:
		return &ir.Type{Kind: ir.MapType, Key: c.convert(t.Key()), Elem: c.convert(t.Elem())}
	case *types.Struct:
		out := &ir.Type{Kind: ir.StructType}
		for i := range t.NumFields() {
			f := t.Field(i)
			out.Fields = append(out.Fields, ir.Field{
				Name:     f.Name(),
				Type:     c.convert(f.Type()),
				Exported: f.Exported(),
				Embedded: f.Embedded(),
				Tag:      t.Tag(i),
				Pos:      c.u.irPos(c.u.position(f.Pos())),
			})
		}
		return out
	}
	return &ir.Type{Kind: ir.OpaqueType, Expr: c.u.typeString(t)}
}

// isTimeType reports time.Time and time.Duration, which serializers treat
// as basic values rather than by their fields.
func isTimeType(t *types.Named) bool {
	obj := t.Obj()
	return obj.Pkg() != nil && obj.Pkg().Path() == "time" && (obj.Name() == "Time" || obj.Name() == "Duration")
}

func hasStringMethod(t types.Type) bool {
	ms := types.NewMethodSet(t)
	for i := range ms.Len() {
		f := ms.At(i).Obj().(*types.Func)
		if f.Name() != "String" {
			continue
		}
		sig := f.Type().(*types.Signature)
		return sig.Params().Len() == 0 && sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), types.Typ[types.String])
	}
	return false
}

// hasJSONMethods reports whether encoding/json treats values of t, or
// of *t, by their methods rather than their structure.
func hasJSONMethods(t types.Type) bool {
	ms := types.NewMethodSet(types.NewPointer(t))
	for i := range ms.Len() {
		switch ms.At(i).Obj().Name() {
		case "MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText", "IsZero":
			return true
		}
	}
	return false
}

// keyProblem explains why t cannot be a key, or returns "": a key must be
// comparable and hash the same in every process, so pointers, interfaces,
// channels and complex numbers are out.
func keyProblem(t types.Type, u *userPackage) string {
	switch tt := t.Underlying().(type) {
	case *types.Basic:
		if tt.Info()&(types.IsBoolean|types.IsInteger|types.IsFloat|types.IsString) != 0 {
			return ""
		}
		return fmt.Sprintf("%s cannot be hashed the same way in every run", u.typeString(t))
	case *types.Struct:
		for i := range tt.NumFields() {
			f := tt.Field(i)
			if !f.Exported() && f.Pkg() != nil && f.Pkg().Path() != u.pkg.PkgPath {
				return fmt.Sprintf("field %s is unexported in package %s, so the generated code cannot hash it", f.Name(), f.Pkg().Path())
			}
			if !f.Exported() {
				return fmt.Sprintf("field %s is unexported, so the generated code cannot hash it: export it", f.Name())
			}
			if p := keyProblem(f.Type(), u); p != "" {
				return fmt.Sprintf("field %s: %s", f.Name(), p)
			}
		}
		return ""
	case *types.Array:
		return keyProblem(tt.Elem(), u)
	case *types.Pointer:
		return fmt.Sprintf("%s is a pointer, and pointers hash differently in every run: key by a value", u.typeString(t))
	}
	if !types.Comparable(t) {
		return fmt.Sprintf("%s is not comparable", u.typeString(t))
	}
	return fmt.Sprintf("%s cannot be hashed the same way in every run: use a string, a number, or a struct of them", u.typeString(t))
}

// jsonProblem explains why values of t cannot be written as JSON, or
// returns "".
func jsonProblem(t types.Type, u *userPackage, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	switch tt := t.Underlying().(type) {
	case *types.Signature, *types.Chan:
		return fmt.Sprintf("%s cannot be written as JSON", u.typeString(t))
	case *types.Basic:
		if tt.Info()&types.IsComplex != 0 || tt.Kind() == types.UnsafePointer {
			return fmt.Sprintf("%s cannot be written as JSON", u.typeString(t))
		}
	case *types.Pointer:
		return jsonProblem(tt.Elem(), u, seen)
	case *types.Slice:
		return jsonProblem(tt.Elem(), u, seen)
	case *types.Array:
		return jsonProblem(tt.Elem(), u, seen)
	case *types.Map:
		return jsonProblem(tt.Elem(), u, seen)
	case *types.Struct:
		for i := range tt.NumFields() {
			f := tt.Field(i)
			if !f.Exported() {
				continue
			}
			if p := jsonProblem(f.Type(), u, seen); p != "" {
				return fmt.Sprintf("field %s: %s", f.Name(), p)
			}
		}
	}
	return ""
}
