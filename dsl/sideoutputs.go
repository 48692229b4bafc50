package dsl

import (
	"go/ast"
	"go/constant"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
)

// Side outputs of a process operator.
//
// A process function sends a value to a side output with
// ctx.Output("name", v). The compiler reads the bodies of the operator's
// functions, and of the functions and methods of the user's package that
// they call (transitively), for those calls: each names a side output by a
// constant string, and its value's static type is what the side output
// carries. Every call with one name must pass one type. A call the
// compiler cannot see (the context handed to another package's function)
// is checked by the generated code when it runs.

// sideOutput is one side output found in a process operator's code.
type sideOutput struct {
	typ types.Type
	pos diag.Pos // of the first call
}

// sideName is what a side output may be called: like a node's name, so
// that NODE.NAME reads as one input.
var sideName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// findSideOutputs collects the side outputs that fns (a process operator's
// functions) send to, reporting every call that does not name one
// clearly, and records them on n.
func (r *resolver) findSideOutputs(n *rnode, fns ...*types.Func) {
	info := r.u.pkg.TypesInfo
	if info == nil {
		return
	}
	decls := r.u.funcDecls()
	sides := map[string]*sideOutput{}
	seen := map[*types.Func]bool{}
	var visit func(f *types.Func)
	visit = func(f *types.Func) {
		if f == nil || seen[f] {
			return
		}
		seen[f] = true
		decl := decls[f]
		if decl == nil || decl.Body == nil {
			return
		}
		calls := map[*ast.SelectorExpr]bool{}
		ast.Inspect(decl.Body, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.CallExpr:
				if sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr); ok && r.isOutput(sel) {
					calls[sel] = true
					r.sideOutputCall(n, x, sides)
					return true
				}
				if callee := calledFunc(info, x.Fun); callee != nil && callee.Pkg() == r.u.pkg.Types {
					visit(callee)
				}
			case *ast.SelectorExpr:
				if !calls[x] && r.isOutput(x) {
					r.report(r.u.position(x.Sel.Pos()), diag.Function, "ctx.Output is used as a value here, so the compiler cannot tell which side output it sends to: call ctx.Output(\"name\", v) directly")
					n.ok = false
				}
			}
			return true
		})
	}
	for _, f := range fns {
		visit(f)
	}
	if len(sides) == 0 {
		return
	}
	n.sides = map[string]types.Type{}
	for _, name := range slices.Sorted(mapsKeys(sides)) {
		s := sides[name]
		n.sides[name] = s.typ
		n.ir.Sides = append(n.ir.Sides, ir.SideOutput{Name: name, Type: r.conv.convert(s.typ), Pos: r.u.irPos(s.pos)})
	}
}

// isOutput reports whether sel selects the method Output of a
// pipegen.Context.
func (r *resolver) isOutput(sel *ast.SelectorExpr) bool {
	s, ok := r.u.pkg.TypesInfo.Selections[sel]
	if !ok || s.Kind() != types.MethodVal || s.Obj().Name() != "Output" {
		return false
	}
	return isPipegenType(s.Recv(), "Context")
}

// sideOutputCall checks one call ctx.Output(name, v) and adds its side
// output to sides.
func (r *resolver) sideOutputCall(n *rnode, call *ast.CallExpr, sides map[string]*sideOutput) {
	info := r.u.pkg.TypesInfo
	if len(call.Args) != 2 || call.Ellipsis.IsValid() {
		return // the type checker has said what is wrong
	}
	at := r.u.position(call.Pos())
	nameTV := info.Types[call.Args[0]]
	if nameTV.Value == nil || nameTV.Value.Kind() != constant.String {
		r.report(r.u.position(call.Args[0].Pos()), diag.Function, "the side output's name must be a constant string, such as ctx.Output(\"alerts\", v): the compiler reads it to give NODE.alerts its type")
		n.ok = false
		return
	}
	name := constant.StringVal(nameTV.Value)
	switch {
	case name == deadLetter:
		r.report(r.u.position(call.Args[0].Pos()), diag.BadValue, "side output %q: the name dead-letter is kept for the malformed records of file sources; pick another name", name)
		n.ok = false
		return
	case !sideName.MatchString(name):
		r.report(r.u.position(call.Args[0].Pos()), diag.BadValue, "side output name %q wants letters, digits, _ and -, starting with a letter or _ (it is read as %s.%s)", name, n.spec.Name.V, name)
		n.ok = false
		return
	}
	t := info.Types[call.Args[1]].Type
	if t == nil {
		return
	}
	if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		t = types.Default(t)
	}
	if types.IsInterface(t) {
		r.report(r.u.position(call.Args[1].Pos()), diag.Type, "ctx.Output(%q, ...) passes a value of interface type %s: a side output carries one concrete type, known when the pipeline compiles: pass a value of that type", name, r.u.typeString(t))
		n.ok = false
		return
	}
	if prev, ok := sides[name]; ok {
		if !types.Identical(prev.typ, t) {
			r.report(r.u.position(call.Args[1].Pos()), diag.Type, "ctx.Output(%q, ...) passes %s, but the call at %s passes %s: a side output carries one type", name, r.u.typeString(t), prev.pos, r.u.typeString(prev.typ))
			n.ok = false
		}
		return
	}
	sides[name] = &sideOutput{typ: t, pos: at}
}

// calledFunc is the function or method a call's fun expression names
// statically, or nil (a func value, an interface method).
func calledFunc(info *types.Info, fun ast.Expr) *types.Func {
	var id *ast.Ident
	switch x := ast.Unparen(fun).(type) {
	case *ast.Ident:
		id = x
	case *ast.SelectorExpr:
		if s, ok := info.Selections[x]; ok {
			if s.Kind() != types.MethodVal || types.IsInterface(s.Recv()) {
				return nil
			}
		}
		id = x.Sel
	case *ast.IndexExpr: // a generic function's instance
		return calledFunc(info, x.X)
	case *ast.IndexListExpr:
		return calledFunc(info, x.X)
	default:
		return nil
	}
	f, _ := info.Uses[id].(*types.Func)
	if f != nil {
		f = f.Origin()
	}
	return f
}

// funcDecls maps the functions and methods declared in the package to
// their declarations.
func (u *userPackage) funcDecls() map[*types.Func]*ast.FuncDecl {
	if u.decls != nil {
		return u.decls
	}
	u.decls = map[*types.Func]*ast.FuncDecl{}
	for _, file := range u.pkg.Syntax {
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if f, ok := u.pkg.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					u.decls[f] = fd
				}
			}
		}
	}
	return u.decls
}

// sideInputType is the type of side output side of process node from, and
// whether it has one; it reports an input naming one it does not have.
func (r *resolver) sideInputType(i rinput) (types.Type, bool) {
	from := i.from
	if t, ok := from.sides[i.side]; ok {
		return t, true
	}
	if !from.ok {
		return nil, false
	}
	var fns []string
	fns = append(fns, from.spec.Fn.V)
	if from.spec.OnTimer.Set {
		fns = append(fns, from.spec.OnTimer.V)
	}
	if len(from.sides) == 0 {
		r.report(i.pos, diag.Graph, "process %s has no side output %s: %s never calls ctx.Output", from.spec.Name.V, i.side, strings.Join(fns, " or "))
		return nil, false
	}
	names := slices.Sorted(mapsKeys(from.sides))
	r.report(i.pos, diag.Graph, "process %s has no side output %s%s (its side outputs: %s)", from.spec.Name.V, i.side, suggest(i.side, names), strings.Join(names, ", "))
	return nil, false
}
