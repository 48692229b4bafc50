package dsl

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/catalog"
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
	diags := &diag.List{}
	u := loadPackage(dir, ".", diag.Pos{File: dir}, diags)
	if u == nil {
		return nil, diags
	}
	a := &Annotations{PkgPath: u.pkg.PkgPath, PkgName: u.pkg.Name, Dir: dir, u: u}
	p := &annotationParser{diags: diags, fset: u.pkg.Fset}

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
	return a, diags
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
var directiveKinds = append([]string{"pipeline", "source", "sink"}, operatorKinds...)

type annotationParser struct {
	diags *diag.List
	fset  *token.FileSet
}

func (p *annotationParser) errorf(pos diag.Pos, format string, args ...any) {
	p.diags.Add(pos, format, args...)
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
					p.errorf(at, "a directive has no space after //: write //pipegen:%s", firstWord(rest))
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
			p.errorf(col(off), "empty directive: write //pipegen:KIND NAME key=value..., KIND one of %s", strings.Join(directiveKinds, ", "))
		} else {
			p.errorf(col(off), "unknown directive //pipegen:%s%s (known: %s)", kind, suggest(kind, directiveKinds), strings.Join(directiveKinds, ", "))
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
			p.errorf(col(off), "a quoted value follows a key: write key=\"...\"")
			return nil
		}
		if off >= len(text) || text[off] != '=' {
			// A word without '=': the name, once, first.
			if !d.name.Set && len(d.args) == 0 {
				d.name = Str{V: word, Pos: col(start), Set: true}
			} else {
				p.errorf(col(start), "unexpected %q: after the name, options are written key=value", word)
			}
			continue
		}
		key := Str{V: word, Pos: col(start), Set: true}
		if word == "" {
			p.errorf(col(start), "a value without a key: write key=value")
		}
		off++ // '='
		a := arg{key: key}
		vstart := off
		switch {
		case off < len(text) && text[off] == '"':
			end, ok := quotedEnd(text, off)
			if !ok {
				p.errorf(col(off), "%s: the quoted value does not end: close it with \"", word)
				// The key is there, without a value.
				a.value = Str{Pos: col(vstart)}
				d.args = append(d.args, a)
				return d
			}
			s, err := strconv.Unquote(text[off:end])
			if err != nil {
				p.errorf(col(off), "%s: malformed quoted value %s: %v", word, text[off:end], unquoteError(err))
				off = end
				continue
			}
			off = end
			a.value = Str{V: s, Pos: col(vstart), Set: true}
			a.list = []Str{a.value}
			if off < len(text) && text[off] != ' ' && text[off] != '\t' {
				p.errorf(col(off), "%s: unexpected text after the quoted value: leave a space before the next key", word)
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
				p.errorf(col(start), "%s has no value", word)
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
			p.errorf(key.Pos, "the name comes first, without name=: //pipegen:%s %s ...", kind, a.value.V)
			d.name = a.value
			continue
		}
		if prev, dup := seen[word]; dup {
			p.errorf(key.Pos, "duplicate key %q in //pipegen:%s %s (first at column %d)", word, kind, d.name.V, prev.Pos.Col)
			continue
		}
		seen[word] = key
		d.args = append(d.args, a)
	}
	if !d.name.Set {
		p.errorf(d.kind.Pos, "//pipegen:%s needs a name first: //pipegen:%s NAME key=value...", kind, kind)
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
		s := &Spec{File: d.file, Version: SupportedVersion, Name: d.name}
		if d.name.Set {
			if prev, dup := byName[d.name.V]; dup {
				p.errorf(d.name.Pos, "pipeline %q is declared twice: first at %s", d.name.V, relative(prev.Name.Pos))
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
			p.errorf(a.value.Pos, "unknown pipeline %q%s (the package declares %s)", a.value.V, suggest(a.value.V, names), declared(names))
			return nil
		}
		return s
	}
	switch len(specs) {
	case 0:
		p.errorf(d.pos, "//pipegen:%s %s belongs to no pipeline: declare one with //pipegen:pipeline NAME in this package", d.kind.V, d.name.V)
		return nil
	case 1:
		return specs[0]
	}
	p.errorf(d.pos, "//pipegen:%s %s: the package declares %s; say which with pipeline=NAME", d.kind.V, d.name.V, declared(names))
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

// keys of the pipeline directive, in the order of the YAML reference.
var pipelineKeys = []string{
	"parallelism", "max-parallelism",
	"checkpoint.mode", "checkpoint.interval", "checkpoint.timeout", "checkpoint.min-pause", "checkpoint.retain", "checkpoint.dir",
	"restart.strategy", "restart.attempts", "restart.delay", "restart.max-delay", "restart.multiplier", "restart.max-failures", "restart.interval",
	"state.backend",
}

func (p *annotationParser) pipeline(s *Spec, d *directive) {
	if d.fn != nil {
		// Harmless, but it reads as if the function played a part.
		p.errorf(d.kind.Pos, "//pipegen:pipeline is in the doc comment of %s, which plays no part in it: put it in a comment of its own", d.fn.Name.Name)
	}
	for _, a := range d.args {
		k := a.key.V
		section, _, _ := strings.Cut(k, ".")
		if (section == "checkpoint" || section == "restart") && !slices.Contains(pipelineKeys, k) {
			p.unknown(a.key, "pipeline", pipelineKeys)
			continue
		}
		if section == "checkpoint" && s.Checkpoint.Pos.Line == 0 {
			s.Checkpoint.Pos = a.key.Pos
		}
		if section == "restart" && s.Restart.Pos.Line == 0 {
			s.Restart.Pos = a.key.Pos
		}
		switch k {
		case "parallelism":
			s.Parallelism = p.positive(a)
		case "max-parallelism":
			s.MaxParallelism = p.positive(a)
		case "checkpoint.mode":
			s.Checkpoint.Mode = p.str(a)
		case "checkpoint.interval":
			s.Checkpoint.Interval = p.str(a)
		case "checkpoint.timeout":
			s.Checkpoint.Timeout = p.str(a)
		case "checkpoint.min-pause":
			s.Checkpoint.MinPause = p.str(a)
		case "checkpoint.retain":
			s.Checkpoint.Retain = p.positive(a)
		case "checkpoint.dir":
			s.Checkpoint.Dir = p.str(a)
		case "restart.strategy":
			s.Restart.Strategy = p.str(a)
		case "restart.attempts":
			s.Restart.Attempts = p.str(a)
		case "restart.delay":
			s.Restart.Delay = p.str(a)
		case "restart.max-delay":
			s.Restart.MaxDelay = p.str(a)
		case "restart.multiplier":
			s.Restart.Multiplier = p.str(a)
		case "restart.max-failures":
			s.Restart.MaxFailures = p.str(a)
		case "restart.interval":
			s.Restart.Interval = p.str(a)
		case "state.backend":
			s.StateBackend = p.str(a)
		case "package":
			p.errorf(a.key.Pos, "a pipeline's package is the package of its directives: drop package=")
		default:
			p.unknown(a.key, "pipeline", pipelineKeys)
		}
	}
}

// Keys of node directives, besides a connector's options.
var (
	sourceKeys   = []string{"pipeline", "uid", "parallelism", "connector", "timestamps.extract", "timestamps.max-out-of-orderness", "timestamps.idle-timeout"}
	sinkKeys     = []string{"pipeline", "uid", "parallelism", "input", "connector"}
	operatorKeys = []string{"pipeline", "uid", "parallelism", "input", "inputs", "key",
		"window.tumbling", "window.sliding", "window.every", "window.session", "window.time",
		"allowed-lateness", "emit", "on-timer"}
)

// operatorKeysOf are the keys of one operator kind: an aggregate's result
// and merge, a join's between (what YAML nests under the kind key).
func operatorKeysOf(kind string) []string {
	switch kind {
	case "aggregate":
		return append(slices.Clone(operatorKeys), "result", "merge")
	case "join":
		return append(slices.Clone(operatorKeys), "between")
	}
	return operatorKeys
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
		n.Kind = Str{V: kind, Pos: d.kind.Pos, Set: true}
	}
	if n.Section != Operators {
		n.Kind = Str{V: kind, Pos: n.Pos}
	}
	what := fmt.Sprintf("%s %q", n.Section.Singular(), n.Name.V)

	// The function under the directive.
	var fn Str
	if d.fn != nil {
		if d.fn.Recv != nil {
			p.errorf(d.kind.Pos, "%s is a method: the function of a //pipegen: directive is a package-level function", d.fn.Name.Name)
		} else {
			fn = Str{V: d.fn.Name.Name, Pos: d.kind.Pos, Set: true}
		}
	}
	role, takesFn := functionRole[kind]
	switch {
	case n.Section == Operators && takesFn && d.fn == nil:
		p.errorf(d.kind.Pos, "//pipegen:%s goes in the doc comment of the %s: the function under it is the %s", kind, role, role)
	case n.Section == Operators && !takesFn && d.fn != nil:
		p.errorf(d.kind.Pos, "a %s takes no function, but this directive is in the doc comment of %s: put it in a comment of its own", kind, d.fn.Name.Name)
	}
	switch kind {
	case "map", "filter", "flatmap", "reduce", "process":
		n.Fn = fn
	case "aggregate":
		n.Add = fn
	case "join":
		n.Apply = fn
	}

	var known []string
	var extra []arg
	switch n.Section {
	case Sources:
		known = sourceKeys
	case Sinks:
		known = sinkKeys
	default:
		known = operatorKeysOf(kind)
	}
	for _, a := range d.args {
		k := a.key.V
		if k == "pipeline" {
			continue // read by owner
		}
		if !slices.Contains(known, k) {
			if n.Section == Operators || strings.Contains(k, ".") {
				p.unknown(a.key, what, known)
			} else {
				extra = append(extra, a)
			}
			continue
		}
		switch k {
		case "uid":
			n.UID = p.str(a)
		case "parallelism":
			n.Parallelism = p.positive(a)
		case "connector":
			n.Connector = p.str(a)
		case "input":
			if len(a.list) > 1 && n.Section == Sinks {
				p.errorf(a.value.Pos, "a sink takes one input, got %s: merge them with a union first", a.value.V)
				n.Inputs = append(n.Inputs, Str{Pos: a.value.Pos})
				continue
			}
			if len(a.list) > 1 {
				p.errorf(a.value.Pos, "input takes one name: for more, use inputs=%s", a.value.V)
				n.Inputs = append(n.Inputs, Str{Pos: a.value.Pos})
				continue
			}
			n.Inputs = append(n.Inputs, p.str(a))
		case "inputs":
			n.Inputs = append(n.Inputs, p.list(a)...)
		case "key":
			n.Keys = p.list(a)
		case "window.tumbling", "window.sliding", "window.every", "window.session", "window.time":
			if n.Window == nil {
				n.Window = &WindowSpec{Pos: a.key.Pos}
			}
			w := n.Window
			dst := map[string]*Str{"window.tumbling": &w.Tumbling, "window.sliding": &w.Sliding, "window.every": &w.Every, "window.session": &w.Session, "window.time": &w.Time}[k]
			*dst = p.str(a)
		case "timestamps.extract", "timestamps.max-out-of-orderness", "timestamps.idle-timeout":
			if n.Timestamps == nil {
				n.Timestamps = &TimestampsSpec{Pos: a.key.Pos}
			}
			t := n.Timestamps
			dst := map[string]*Str{"timestamps.extract": &t.Extract, "timestamps.max-out-of-orderness": &t.MaxOutOfOrderness, "timestamps.idle-timeout": &t.IdleTimeout}[k]
			*dst = p.str(a)
		case "allowed-lateness":
			n.AllowedLateness = p.str(a)
		case "emit":
			n.Emit = p.str(a)
		case "on-timer":
			n.OnTimer = p.str(a)
		case "result":
			n.Result = p.str(a)
		case "merge":
			n.Merge = p.str(a)
		case "between":
			n.Between = p.list(a)
		}
	}
	if n.Section != Operators {
		p.connectorOptions(n, d, fn, extra, known)
	}
	return n
}

// connectorOptions checks the keys of a source or sink that are not
// common keys against its connector, and places a generator source's
// function.
func (p *annotationParser) connectorOptions(n *NodeSpec, d *directive, fn Str, extra []arg, known []string) {
	role := catalog.SourceRole
	if n.Section == Sinks {
		role = catalog.SinkRole
	}
	var conn *catalog.Connector
	if n.Connector.Set {
		conn = catalog.Lookup(role, n.Connector.V)
		if conn == nil {
			p.errorf(n.Connector.Pos, "unknown %s connector %q: use one of %s", role, n.Connector.V, strings.Join(catalog.Names(role), ", "))
		}
	} else if n.Connector.Pos.Line == 0 {
		p.errorf(d.kind.Pos, "%s %q has no connector: add connector= (one of %s)", role, n.Name.V, strings.Join(catalog.Names(role), ", "))
	}
	generator := conn != nil && conn.Name == "generator"
	switch {
	case generator:
		if d.fn == nil {
			p.errorf(d.kind.Pos, "a generator source goes in the doc comment of its function, func(seq uint64) (T, bool)")
		}
		// Without a function (reported), an option without a value keeps
		// Resolve from asking for one.
		n.Options = append(n.Options, OptionSpec{Name: Str{V: "generate", Pos: d.kind.Pos, Set: true}, Value: fn})
	case conn != nil && d.fn != nil:
		p.errorf(d.kind.Pos, "a %s %s takes no function, but this directive is in the doc comment of %s: put it in a comment of its own", conn.Name, role, d.fn.Name.Name)
	}
	for _, a := range extra {
		if conn == nil {
			continue // reported
		}
		if a.key.V == "generate" && generator {
			p.errorf(a.key.Pos, "generate is the function under the directive: drop generate=")
			continue
		}
		if conn.Option(a.key.V) == nil {
			all := append(slices.Clone(known), conn.OptionNames()...)
			p.errorf(a.key.Pos, "unknown key %q in %s %q%s (the %s %s takes %s)", a.key.V, role, n.Name.V, suggest(a.key.V, all), conn.Name, role, strings.Join(conn.OptionNames(), ", "))
			continue
		}
		n.Options = append(n.Options, OptionSpec{Name: a.key, Value: p.str(a)})
	}
}

func (p *annotationParser) unknown(key Str, what string, known []string) {
	p.errorf(key.Pos, "unknown key %q in %s%s (known keys: %s)", key.V, what, suggest(key.V, known), strings.Join(known, ", "))
}

func (p *annotationParser) str(a arg) Str { return a.value }

// list returns the items of a comma-separated value.
func (p *annotationParser) list(a arg) []Str {
	if !a.value.Set {
		return []Str{a.value}
	}
	for _, s := range a.list {
		if !s.Set {
			p.errorf(s.Pos, "%s has an empty item in %q: separate names with single commas", a.key.V, a.value.V)
		}
	}
	return a.list
}

func (p *annotationParser) positive(a arg) Int {
	if !a.value.Set {
		return Int{Pos: a.value.Pos}
	}
	v, err := strconv.Atoi(a.value.V)
	if err != nil || v < 1 {
		p.errorf(a.value.Pos, "%s wants a whole number of at least 1, got %q", a.key.V, a.value.V)
		return Int{Pos: a.value.Pos}
	}
	return Int{V: v, Pos: a.value.Pos, Set: true}
}

// Resolve type-checks one of the package's pipelines, as Resolve does, and
// words its messages for directives: the type checker speaks YAML ("add
// `key: KeyFunc`"), which the directives write key=KeyFunc.
func (a *Annotations) Resolve(s *Spec) (*ir.Pipeline, *diag.List) {
	p, diags := Resolve(s)
	if diags.Len() == 0 {
		return p, diags
	}
	out := &diag.List{}
	top := diag.Pos{File: s.File, Line: 1, Col: 1}
	for _, d := range diags.Items() {
		switch {
		case d.Pos == top && strings.HasPrefix(d.Msg, "the pipeline has no sources"):
			out.Add(s.Name.Pos, "pipeline %q has no source: add //pipegen:source NAME%s connector=...", s.Name.V, a.pipelineKey(s))
		case d.Pos == top && strings.HasPrefix(d.Msg, "the pipeline has no sinks"):
			out.Add(s.Name.Pos, "pipeline %q has no sink, so it would compute nothing anyone sees: add //pipegen:sink NAME%s input=... connector=...", s.Name.V, a.pipelineKey(s))
		default:
			out.Add(d.Pos, "%s", directiveWording(d.Msg))
		}
	}
	return p, out
}

// pipelineKey is the pipeline= a node directive of s needs, if any.
func (a *Annotations) pipelineKey(s *Spec) string {
	if len(a.Specs) > 1 {
		return " pipeline=" + s.Name.V
	}
	return ""
}

// yamlWording are the YAML snippets of the type checker's messages and
// their directive form; backquoted `key: value` snippets not listed become
// key=value.
var yamlWording = strings.NewReplacer(
	"list them under `inputs:`", "list them in inputs=a,b",
	"`extract: Func`", "timestamps.extract=Func",
	"`every: SLIDE`", "window.every=SLIDE",
	"add `timestamps:` to the source", "add timestamps.extract=Func to the source",
	"add `timestamps:` to their sources", "add timestamps.extract=Func to their sources",
	"use time: processing", "use window.time=processing",
	"key: [LeftKey, RightKey]", "key=LeftKey,RightKey",
	"(window: {tumbling: 10s})", "(window.tumbling=10s)",
	"(between: [-5s, 5s])", "(between=-5s,5s)",
)

var yamlSnippet = regexp.MustCompile("`([a-z-]+): ([^`]+)`")

func directiveWording(msg string) string {
	return yamlSnippet.ReplaceAllString(yamlWording.Replace(msg), "$1=$2")
}
