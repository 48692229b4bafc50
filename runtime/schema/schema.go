// Package schema reads the schemas of checkpointed state that generated
// code records (a type with the ids of its fields, as codegen writes it)
// and decides whether state written under one schema can be read under
// another. Field ids are the positions of struct fields, so the rules
// follow from what the generated decoders do: a field added at the end
// reads as its zero value, a field removed from the end is skipped; a
// field whose type, or whose name at the same id, changed is refused, as
// is any change of a key, a named type or a basic type.
package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is a parsed schema: a named, struct, pointer, slice, array, map or
// basic type.
type Type struct {
	// Name is a named type's qualified name (pkg/path.Name) or a basic
	// type's name (int64, string, time.Time).
	Name string
	// Op is "", "*", "[]", "[N]" or "map" for the unnamed compound types;
	// "mapstate" for a pipegen.MapState field, mapstate[K]V, whose
	// entries are state of their own.
	Op         string
	Key, Elem  *Type
	Fields     []Field // a struct's; Struct marks a struct without any
	Struct     bool
	Underlying *Type // a named type's, when the schema spells it out
}

// Field is a struct field with its id.
type Field struct {
	ID   int
	Name string
	Type *Type
}

// Parse reads a schema string.
func Parse(s string) (*Type, error) {
	p := &parser{s: s}
	t := p.typ()
	if p.err == nil && p.i != len(p.s) {
		p.fail("unexpected %q", p.s[p.i:])
	}
	if p.err != nil {
		return nil, fmt.Errorf("schema %q: %w", s, p.err)
	}
	return t, nil
}

type parser struct {
	s   string
	i   int
	err error
}

func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("at byte %d: "+format, append([]any{p.i}, args...)...)
	}
}

func (p *parser) eat(prefix string) bool {
	if strings.HasPrefix(p.s[p.i:], prefix) {
		p.i += len(prefix)
		return true
	}
	return false
}

func (p *parser) typ() *Type {
	if p.err != nil {
		return nil
	}
	switch {
	case p.eat("*"):
		return &Type{Op: "*", Elem: p.typ()}
	case p.eat("[]"):
		return &Type{Op: "[]", Elem: p.typ()}
	case strings.HasPrefix(p.s[p.i:], "map[") || strings.HasPrefix(p.s[p.i:], "mapstate["):
		op := p.s[p.i : p.i+strings.IndexByte(p.s[p.i:], '[')]
		p.i += len(op) + 1
		k := p.typ()
		if !p.eat("]") {
			p.fail("want ]")
		}
		return &Type{Op: op, Key: k, Elem: p.typ()}
	case p.eat("["):
		j := strings.IndexByte(p.s[p.i:], ']')
		if j < 0 {
			p.fail("want ]")
			return nil
		}
		n := p.s[p.i : p.i+j]
		if _, err := strconv.Atoi(n); err != nil {
			p.fail("bad array length %q", n)
		}
		p.i += j + 1
		return &Type{Op: "[" + n + "]", Elem: p.typ()}
	case strings.HasPrefix(p.s[p.i:], "{"):
		return p.structType()
	}
	name := p.name()
	if name == "" {
		p.fail("want a type")
		return nil
	}
	t := &Type{Name: name}
	switch {
	case strings.HasPrefix(p.s[p.i:], "{"):
		t.Underlying = p.structType()
	case p.eat("("):
		t.Underlying = p.typ()
		if !p.eat(")") {
			p.fail("want )")
		}
	}
	return t
}

// name reads a type name up to the next delimiter; package paths hold
// dots, slashes and dashes.
func (p *parser) name() string {
	j := p.i
	for j < len(p.s) && !strings.ContainsRune("{}()[]; ", rune(p.s[j])) {
		j++
	}
	n := p.s[p.i:j]
	p.i = j
	return n
}

func (p *parser) structType() *Type {
	p.eat("{")
	t := &Type{Struct: true}
	for p.err == nil && !p.eat("}") {
		if len(t.Fields) > 0 && !p.eat("; ") {
			p.fail("want ; or }")
			return t
		}
		j := strings.IndexByte(p.s[p.i:], ' ')
		if j < 0 {
			p.fail("want a field id")
			return t
		}
		id, err := strconv.Atoi(p.s[p.i : p.i+j])
		if err != nil {
			p.fail("bad field id %q", p.s[p.i:p.i+j])
			return t
		}
		p.i += j + 1
		k := strings.IndexByte(p.s[p.i:], ' ')
		if k < 0 {
			p.fail("want a field name")
			return t
		}
		name := p.s[p.i : p.i+k]
		p.i += k + 1
		t.Fields = append(t.Fields, Field{ID: id, Name: name, Type: p.typ()})
		if p.i >= len(p.s) && p.err == nil {
			p.fail("want }")
		}
	}
	return t
}

// String writes the type back in the form Parse reads.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	switch {
	case t.Name != "":
		b.WriteString(t.Name)
		if u := t.Underlying; u != nil {
			if u.Struct && u.Name == "" && u.Op == "" {
				u.write(b)
			} else {
				b.WriteByte('(')
				u.write(b)
				b.WriteByte(')')
			}
		}
	case t.Struct:
		b.WriteByte('{')
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(b, "%d %s ", f.ID, f.Name)
			f.Type.write(b)
		}
		b.WriteByte('}')
	case t.Op == "map" || t.Op == "mapstate":
		b.WriteString(t.Op + "[")
		t.Key.write(b)
		b.WriteByte(']')
		t.Elem.write(b)
	default:
		b.WriteString(t.Op)
		t.Elem.write(b)
	}
}
