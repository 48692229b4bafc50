package dsl

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/settings"
)

// The annotation front end: pipelines written as //pipegen: directives in
// the comments of the Go package that holds their functions (see
// docs/annotations.md). Each directive is one line:
//
//	//pipegen:KIND NAME key=value key=value ...
//
// KIND is pipeline, source, sink or an operator kind; NAME names what the
// directive declares. Keys are the YAML format's keys, dotted for its
// sections (checkpoint.interval=1s, window.tumbling=10s); lists are
// comma-separated (inputs=a,b); a value with spaces is a Go string
// ("a b"). The function whose doc comment holds an operator's directive is
// the operator's function (an aggregate's add, a join's apply, a generator
// source's generate).

// directivePrefix starts every directive.
const directivePrefix = "//pipegen:"

// Annotations are the pipelines of one Go package, read from its //pipegen:
// directives.
type Annotations struct {
	// PkgPath and PkgName name the package; Dir is its directory.
	PkgPath string
	PkgName string
	Dir     string
	// Specs holds a spec per //pipegen:pipeline directive, in the order of
	// the package's files (by name) and lines. Resolve type-checks each
	// against the package loaded here, without loading it again.
	Specs []*Spec

	u *userPackage
}

// Declared returns where the package declares name at package level
// (generated files left out), for the check that generated code does not
// take the user's names.
func (a *Annotations) Declared(name string) (diag.Pos, bool) {
	obj := a.u.pkg.Types.Scope().Lookup(name)
	if obj == nil {
		return diag.Pos{}, false
	}
	return a.u.position(obj.Pos()), true
}

// ParseAnnotations loads the Go package in dir, without the files pipegen
// generated into it, and reads its //pipegen: directives into specs. It
// reports every problem in the directives, each at the position of the
// directive's key or value, and the package's own errors; the specs are
// usable only when the list is empty (but Resolve can still check them, to
// report everything at once).
func ParseAnnotations(dir string) (*Annotations, *diag.List) {
	p := &annotationParser{reporter: reporter{diags: &diag.List{}, syntax: directiveSyntax{}}}
	u := loadPackage(dir, ".", diag.Pos{File: dir}, &p.reporter)
	if u == nil {
		return nil, p.diags
	}
	a := &Annotations{PkgPath: u.pkg.PkgPath, PkgName: u.pkg.Name, Dir: dir, u: u}
	p.fset = u.pkg.Fset

	// Files in name order, directives in line order.
	files := slices.Clone(u.pkg.Syntax)
	slices.SortFunc(files, func(x, y *ast.File) int {
		return cmp.Compare(u.pkg.Fset.File(x.Pos()).Name(), u.pkg.Fset.File(y.Pos()).Name())
	})
	var ds []*directive
	for _, f := range files {
		ds = append(ds, p.file(f)...)
	}
	a.Specs = p.assemble(ds)
	for _, s := range a.Specs {
		s.pkg = u
	}
	return a, p.diags
}

// directive is one //pipegen: line.
type directive struct {
	pos  diag.Pos // of the "//"
	kind Str      // the word after //pipegen:
	name Str      // the first word after the kind
	args []arg
	fn   *ast.FuncDecl // the function whose doc comment holds the directive
	file string
}

// arg is one key=value.
type arg struct {
	key   Str
	value Str // Set false when the value is missing
	// list holds the comma-separated items of an unquoted value.
	list []Str
}

// directiveKinds are the words that may follow //pipegen:.
var directiveKinds = append([]string{"pipeline", "source", "sink"}, settings.OperatorKinds...)

type annotationParser struct {
	reporter
	fset *token.FileSet
}

// file finds the directives of one file.
func (p *annotationParser) file(f *ast.File) []*directive {
	funcs := map[*ast.CommentGroup]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
			funcs[fd.Doc] = fd
		}
	}
	var out []*directive
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			pos := p.fset.Position(c.Slash)
			at := diag.Pos{File: pos.Filename, Line: pos.Line, Col: pos.Column}
			if !strings.HasPrefix(c.Text, directivePrefix) {
				// "// pipegen:map" is a comment, not a directive: say so.
				if rest, ok := strings.CutPrefix(c.Text, "// pipegen:"); ok && slices.Contains(directiveKinds, firstWord(rest)) {
					p.report(at, diag.Syntax, "a directive has no space after //: write //pipegen:%s", firstWord(rest))
				}
				continue
			}
			if d := p.directive(c.Text, at); d != nil {
				d.fn = funcs[cg]
				d.file = pos.Filename
				out = append(out, d)
			}
		}
	}
	return out
}

// relative shows a position inside a message as diagnostics show theirs:
// relative to the working directory.
func relative(pos diag.Pos) diag.Pos {
	if wd, err := os.Getwd(); err == nil && filepath.IsAbs(pos.File) {
		if rel, err := filepath.Rel(wd, pos.File); err == nil {
			pos.File = rel
		}
	}
	return pos
}

func firstWord(s string) string {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i]
	}
	return s
}

// directive splits one directive into its kind, name and arguments.
func (p *annotationParser) directive(text string, at diag.Pos) *directive {
	col := func(off int) diag.Pos { return diag.Pos{File: at.File, Line: at.Line, Col: at.Col + off} }
	off := len(directivePrefix)
	kind := firstWord(text[off:])
	d := &directive{pos: at, kind: Str{V: kind, Pos: col(off), Set: true}}
	if !slices.Contains(directiveKinds, kind) {
		if kind == "" {
			p.report(col(off), diag.Syntax, "empty directive: write //pipegen:KIND NAME key=value..., KIND one of %s", strings.Join(directiveKinds, ", "))
		} else {
			p.report(col(off), diag.Syntax, "unknown directive //pipegen:%s%s (known: %s)", kind, suggest(kind, directiveKinds), strings.Join(directiveKinds, ", "))
		}
		return nil
	}
	off += len(kind)
	seen := map[string]Str{}
	for {
		for off < len(text) && (text[off] == ' ' || text[off] == '\t') {
			off++
		}
		if off >= len(text) {
			break
		}
		start := off
		for off < len(text) && text[off] != ' ' && text[off] != '\t' && text[off] != '=' && text[off] != '"' {
			off++
		}
		word := text[start:off]
		if off < len(text) && text[off] == '"' {
			p.report(col(off), diag.Syntax, "a quoted value follows a key: write key=\"...\"")
			return nil
		}
		if off >= len(text) || text[off] != '=' {
			// A word without '=': the name, once, first.
			if !d.name.Set && len(d.args) == 0 {
				d.name = Str{V: word, Pos: col(start), Set: true}
			} else {
				p.report(col(start), diag.Syntax, "unexpected %q: after the name, options are written key=value", word)
			}
			continue
		}
		key := Str{V: word, Pos: col(start), Set: true}
		if word == "" {
			p.report(col(start), diag.Syntax, "a value without a key: write key=value")
		}
		off++ // '='
		a := arg{key: key}
		vstart := off
		switch {
		case off < len(text) && text[off] == '"':
			end, ok := quotedEnd(text, off)
			if !ok {
				p.report(col(off), diag.Syntax, "%s: the quoted value does not end: close it with \"", word)
				// The key is there, without a value.
				a.value = Str{Pos: col(vstart)}
				d.args = append(d.args, a)
				return d
			}
			s, err := strconv.Unquote(text[off:end])
			if err != nil {
				p.report(col(off), diag.Syntax, "%s: malformed quoted value %s: %v", word, text[off:end], unquoteError(err))
				off = end
				continue
			}
			off = end
			a.value = Str{V: s, Pos: col(vstart), Set: true}
			a.list = []Str{a.value}
			if off < len(text) && text[off] != ' ' && text[off] != '\t' {
				p.report(col(off), diag.Syntax, "%s: unexpected text after the quoted value: leave a space before the next key", word)
				for off < len(text) && text[off] != ' ' && text[off] != '\t' {
					off++
				}
			}
		default:
			for off < len(text) && text[off] != ' ' && text[off] != '\t' {
				off++
			}
			v := text[vstart:off]
			if v == "" {
				p.report(col(start), diag.Missing, "%s has no value", word)
				a.value = Str{Pos: col(vstart)}
				break
			}
			a.value = Str{V: v, Pos: col(vstart), Set: true}
			itemOff := vstart
			for item := range strings.SplitSeq(v, ",") {
				s := Str{V: item, Pos: col(itemOff), Set: item != ""}
				a.list = append(a.list, s)
				itemOff += len(item) + 1
			}
		}
		if word == "" {
			continue // reported
		}
		if word == "name" && !d.name.Set && len(d.args) == 0 {
			p.report(key.Pos, diag.Syntax, "the name comes first, without name=: //pipegen:%s %s ...", kind, a.value.V)
			d.name = a.value
			continue
		}
		if prev, dup := seen[word]; dup {
			p.report(key.Pos, diag.Duplicate, "duplicate key %q in //pipegen:%s %s (first at column %d)", word, kind, d.name.V, prev.Pos.Col)
			continue
		}
		seen[word] = key
		d.args = append(d.args, a)
	}
	if !d.name.Set {
		p.report(d.kind.Pos, diag.Missing, "//pipegen:%s needs a name first: //pipegen:%s NAME key=value...", kind, kind)
	}
	return d
}

// quotedEnd returns the offset after the Go string starting at text[i].
func quotedEnd(text string, i int) (int, bool) {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func unquoteError(err error) string {
	if err == strconv.ErrSyntax {
		return "write it as a Go string"
	}
	return err.Error()
}

// assemble turns the directives into one spec per pipeline.
func (p *annotationParser) assemble(ds []*directive) []*Spec {
	var specs []*Spec
	byName := map[string]*Spec{}
	for _, d := range ds {
		if d.kind.V != "pipeline" {
			continue
		}
		s := &Spec{File: d.file, Pos: d.name.Pos, Version: SupportedVersion, Name: d.name, syntax: directiveSyntax{}}
		if d.name.Set {
			if prev, dup := byName[d.name.V]; dup {
				p.report(d.name.Pos, diag.Duplicate, "pipeline %q is declared twice: first at %s", d.name.V, relative(prev.Name.Pos))
				continue
			}
			byName[d.name.V] = s
		}
		p.pipeline(s, d)
		specs = append(specs, s)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name.V)
		if len(byName) > 1 {
			// A node directive of s needs pipeline=.
			s.syntax = directiveSyntax{pipeline: s.Name.V}
		}
	}
	for _, d := range ds {
		if d.kind.V == "pipeline" {
			continue
		}
		s := p.owner(d, specs, byName, names)
		n := p.node(d)
		if s == nil || n == nil {
			continue
		}
		switch n.Section {
		case Sources:
			s.Sources = append(s.Sources, n)
		case Sinks:
			s.Sinks = append(s.Sinks, n)
		default:
			s.Operators = append(s.Operators, n)
		}
	}
	return specs
}

// owner finds the pipeline a node directive belongs to: pipeline=NAME, or
// the package's only pipeline.
func (p *annotationParser) owner(d *directive, specs []*Spec, byName map[string]*Spec, names []string) *Spec {
	for _, a := range d.args {
		if a.key.V != "pipeline" {
			continue
		}
		if !a.value.Set {
			return nil // reported
		}
		s, ok := byName[a.value.V]
		if !ok {
			p.report(a.value.Pos, diag.BadValue, "unknown pipeline %q%s (the package declares %s)", a.value.V, suggest(a.value.V, names), declared(names))
			return nil
		}
		return s
	}
	switch len(specs) {
	case 0:
		p.report(d.pos, diag.Missing, "//pipegen:%s %s belongs to no pipeline: declare one with //pipegen:pipeline NAME in this package", d.kind.V, d.name.V)
		return nil
	case 1:
		return specs[0]
	}
	p.report(d.pos, diag.Missing, "//pipegen:%s %s: the package declares %s; say which with pipeline=NAME", d.kind.V, d.name.V, declared(names))
	return nil
}

func declared(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	switch len(names) {
	case 0:
		return "no pipeline"
	case 1:
		return "pipeline " + q[0]
	}
	return "pipelines " + strings.Join(q, ", ")
}

// pipelineKeys are the keys of a //pipegen:pipeline directive: the
// pipeline's settings a directive writes key=value, in the order of the
// settings table.
func pipelineKeys() []string {
	var keys []string
	for _, s := range settings.All(settings.Pipeline) {
		if k, ok := directiveKey(s.Path); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func (p *annotationParser) pipeline(s *Spec, d *directive) {
	if d.fn != nil {
		// Harmless, but it reads as if the function played a part.
		p.report(d.kind.Pos, diag.Misplaced, "//pipegen:pipeline is in the doc comment of %s, which plays no part in it: put it in a comment of its own", d.fn.Name.Name)
	}
	known := pipelineKeys()
	for _, a := range d.args {
		switch {
		case a.key.V == "package":
			p.report(a.key.Pos, diag.Misplaced, "a pipeline's package is the package of its directives: drop package=")
		case slices.Contains(known, a.key.V):
			s.set(a.key.V, a.value) // a pipeline's keys are their paths
		default:
			p.unknownKey(a.key, "pipeline", known)
		}
	}
}

// nodeKeys lists the keys of a node directive of the scope and, for an
// operator, the kind, besides pipeline= and a connector's options: the node
// keys a directive writes key=value (for an operator, those of every kind
// but the sections of other kinds: an aggregate takes result=, a join
// between=), in the order of the settings table, with their paths.
func nodeKeys(scope settings.Scope, kind string) (names []string, paths map[string]string) {
	paths = map[string]string{}
	for _, s := range settings.All(scope) {
		k, ok := directiveKey(s.Path)
		section, _, nested := strings.Cut(s.Path, ".")
		if !ok || nested && slices.Contains(settings.OperatorKinds, section) && section != kind {
			continue
		}
		if _, dup := paths[k]; !dup {
			names = append(names, k)
			paths[k] = s.Path
		}
	}
	return names, paths
}

// functionRole names what the function under a directive is, per kind;
// kinds without one take no function.
var functionRole = map[string]string{
	"map": "map function", "filter": "filter function", "flatmap": "flatmap function",
	"reduce": "reduce function", "process": "process function",
	"aggregate": "aggregate's add function", "join": "join's apply function",
}

func (p *annotationParser) node(d *directive) *NodeSpec {
	n := &NodeSpec{Pos: d.pos, Name: d.name}
	kind := d.kind.V
	switch kind {
	case "source":
		n.Section = Sources
	case "sink":
		n.Section = Sinks
	default:
		n.Section = Operators
	}
	n.Kind = Str{V: kind, Pos: d.kind.Pos, Set: n.Section == Operators}
	p.nodeName = n.Name.V
	defer func() { p.nodeName = "" }()
	what := fmt.Sprintf("%s %q", n.Section.Singular(), n.Name.V)

	// The function under the directive.
	var fn Str
	if d.fn != nil {
		if d.fn.Recv != nil {
			p.report(d.kind.Pos, diag.Function, "%s is a method: the function of a //pipegen: directive is a package-level function", d.fn.Name.Name)
		} else {
			fn = Str{V: d.fn.Name.Name, Pos: d.kind.Pos, Set: true}
		}
	}
	role, takesFn := functionRole[kind]
	// A process with two inputs names a function per input, in a comment
	// of its own: //pipegen:process NAME inputs=a,b key=KA,KB process=FA,FB.
	var fns *arg
	for i := range d.args {
		if kind == "process" && d.args[i].key.V == "process" {
			fns = &d.args[i]
		}
	}
	switch {
	case fns != nil && d.fn != nil:
		p.report(fns.key.Pos, diag.Misplaced, "process= lists the functions of a process with two inputs, but this directive is in the doc comment of %s: put it in a comment of its own", d.fn.Name.Name)
	case fns != nil:
		n.Fns = p.list(*fns)
		if len(n.Fns) > 0 {
			fn = n.Fns[0]
		}
	case n.Section == Operators && takesFn && d.fn == nil:
		p.report(d.kind.Pos, diag.Missing, "//pipegen:%s goes in the doc comment of the %s: the function under it is the %s", kind, role, role)
	case n.Section == Operators && !takesFn && d.fn != nil:
		p.report(d.kind.Pos, diag.Misplaced, "a %s takes no function, but this directive is in the doc comment of %s: put it in a comment of its own", kind, d.fn.Name.Name)
	}
	switch kind {
	case "map", "filter", "flatmap", "reduce", "process":
		n.Fn = fn
	case "aggregate":
		n.Add = fn
	case "join":
		n.Apply = fn
	}

	known, paths := nodeKeys(n.Section.scope(), kind)
	known = append([]string{"pipeline"}, known...)
	var extra []Str
	for _, a := range d.args {
		k := a.key.V
		if k == "pipeline" || fns != nil && k == "process" {
			continue // read by owner, or above
		}
		path, ok := paths[k]
		if !ok {
			if n.Section == Operators || strings.Contains(k, ".") || settings.Node(settings.AnyNode, "", k) != nil && !isConnectorOption(n.Section.scope(), k) {
				p.unknownKey(a.key, what, known)
			} else {
				extra = append(extra, a.key, a.value)
			}
			continue
		}
		switch {
		case path == "input":
			if len(a.list) > 1 && n.Section == Sinks {
				p.report(a.value.Pos, diag.BadValue, "a sink takes one input, got %s: merge them with a union first", a.value.V)
				n.Inputs = append(n.Inputs, Str{Pos: a.value.Pos})
				continue
			}
			if len(a.list) > 1 {
				p.report(a.value.Pos, diag.BadValue, "%v takes one name: for more, use %v", keyRef("input"), ex("inputs", a.value.V))
				n.Inputs = append(n.Inputs, Str{Pos: a.value.Pos})
				continue
			}
			n.Inputs = append(n.Inputs, a.value)
		case path == "inputs":
			n.Inputs = append(n.Inputs, p.list(a)...)
		case path == "key":
			n.Keys = p.list(a)
		case path == "join.between":
			n.Between = p.list(a)
		default:
			if strings.HasPrefix(path, "window.") && n.Window == nil {
				n.Window = &WindowSpec{Pos: a.key.Pos}
			}
			if strings.HasPrefix(path, "trigger.") && n.Trigger == nil {
				n.Trigger = &TriggerSpec{Pos: a.key.Pos}
			}
			if strings.HasPrefix(path, "timestamps.") && n.Timestamps == nil {
				n.Timestamps = &TimestampsSpec{Pos: a.key.Pos}
			}
			*n.field(path) = a.value
		}
	}
	if n.Section != Operators {
		p.connectorOptions(n, d, fn, known, extra)
	}
	return n
}

// connectorOptions checks the keys of a source or sink that are not node
// keys against its connector, and places a generator source's function.
func (p *annotationParser) connectorOptions(n *NodeSpec, d *directive, fn Str, known []string, extra []Str) {
	conn := settings.LookupConnector(n.Section.scope(), n.Connector.V)
	generator := conn != nil && conn.Name == "generator"
	switch {
	case generator:
		if d.fn == nil {
			p.report(d.kind.Pos, diag.Missing, "a generator source goes in the doc comment of its function, func(seq uint64) (T, bool) or func(seq uint64, into *T) bool")
		}
		// Without a function (reported), an option without a value keeps
		// Resolve from asking for one.
		n.Options = append(n.Options, OptionSpec{Name: Str{V: "generate", Pos: d.kind.Pos, Set: true}, Value: fn})
	case conn != nil && d.fn != nil:
		p.report(d.kind.Pos, diag.Misplaced, "a %s %s takes no function, but this directive is in the doc comment of %s: put it in a comment of its own", conn.Name, n.Section.Singular(), d.fn.Name.Name)
	}
	var keys, values []Str
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i].V == "generate" && generator {
			p.report(extra[i].Pos, diag.Misplaced, "generate is the function under the directive: drop generate=")
			continue
		}
		keys, values = append(keys, extra[i]), append(values, extra[i+1])
	}
	n.Options = append(n.Options, p.reporter.connectorOptions(n, known, keys, func(i int) Str { return values[i] })...)
}

// list returns the items of a comma-separated value.
func (p *annotationParser) list(a arg) []Str {
	if !a.value.Set {
		return []Str{a.value}
	}
	for _, s := range a.list {
		if !s.Set {
			p.report(s.Pos, diag.Syntax, "%s has an empty item in %q: separate names with single commas", a.key.V, a.value.V)
		}
	}
	return a.list
}

// Resolve type-checks one of the package's pipelines, as Resolve does. Its
// messages write keys as directives do (key=KeyFunc), because the spec
// remembers the front end it came from.
func (a *Annotations) Resolve(s *Spec) (*ir.Pipeline, *diag.List) { return Resolve(s) }
