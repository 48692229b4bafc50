package schema

import (
	"fmt"
	"strings"
)

// Compatible reports, as an error that says where and what changed,
// whether state written under the schema old can be read by a decoder of
// the schema now.
func Compatible(old, now *Type) error {
	c := &comparer{oldDefs: map[string]*Type{}, nowDefs: map[string]*Type{}, done: map[string]bool{}}
	define(old, c.oldDefs)
	define(now, c.nowDefs)
	return c.compare(old, now, "")
}

// CompatibleStrings is Compatible of two schema strings; a schema that
// does not parse is only compatible with an equal string. A join's state
// schema is its two sides' joined by " + ".
func CompatibleStrings(old, now string) error {
	if old == now {
		return nil
	}
	// ttl(S): the state of a node with state-ttl, whose values carry
	// their write times.
	oldInner, oldTTL := TTLInner(old)
	nowInner, nowTTL := TTLInner(now)
	switch {
	case oldTTL && !nowTTL:
		return fmt.Errorf("the node had a state-ttl in the checkpoint and has none now: its stored values carry their write times, which this version does not read; keep a state-ttl (a long one keeps the state as good as forever)")
	case !oldTTL && nowTTL:
		return fmt.Errorf("the node has a state-ttl now and had none in the checkpoint: its stored values have no write times; start without the state-ttl, or start over (--fresh)")
	case oldTTL:
		return CompatibleStrings(oldInner, nowInner)
	}
	olds, nows := strings.Split(old, " + "), strings.Split(now, " + ")
	if len(olds) != len(nows) {
		return fmt.Errorf("the state was of %d types in the checkpoint and is of %d now", len(olds), len(nows))
	}
	if len(olds) > 1 {
		for i := range olds {
			if err := CompatibleStrings(olds[i], nows[i]); err != nil {
				return err
			}
		}
		return nil
	}
	o, err := Parse(old)
	if err != nil {
		return err
	}
	n, err := Parse(now)
	if err != nil {
		return err
	}
	return Compatible(o, n)
}

// define collects the underlying type of every named type spelled out in
// t: a later mention of the same type carries its name only.
func define(t *Type, defs map[string]*Type) {
	if t == nil {
		return
	}
	if t.Name != "" && t.Underlying != nil {
		if _, ok := defs[t.Name]; ok {
			return
		}
		defs[t.Name] = t.Underlying
		define(t.Underlying, defs)
		return
	}
	define(t.Key, defs)
	define(t.Elem, defs)
	for _, f := range t.Fields {
		define(f.Type, defs)
	}
}

type comparer struct {
	oldDefs, nowDefs map[string]*Type
	// done holds the named types compared already (or being compared):
	// recursive types end there.
	done map[string]bool
}

// at names a place in the type for a message: "Acc.Span.Last", or "the
// key" at the top.
func at(path string) string {
	if path == "" {
		return "the type"
	}
	return path
}

func (c *comparer) compare(old, now *Type, path string) error {
	switch {
	case old.Name != "" || now.Name != "":
		if old.Name != now.Name {
			return fmt.Errorf("%s was %s in the checkpoint and is %s now", at(path), short(old), short(now))
		}
		if c.done[old.Name] {
			return nil
		}
		c.done[old.Name] = true
		ou, nu := c.oldDefs[old.Name], c.nowDefs[now.Name]
		if ou == nil || nu == nil {
			return nil // a basic type, or time.Time: its name says it all
		}
		if path == "" {
			path = baseName(old.Name)
		}
		return c.compare(ou, nu, path)
	case old.Struct != now.Struct || old.Op != now.Op:
		return fmt.Errorf("%s was %s in the checkpoint and is %s now", at(path), short(old), short(now))
	case old.Struct:
		for i, of := range old.Fields {
			if i >= len(now.Fields) {
				return nil // fields removed from the end are skipped
			}
			nf := now.Fields[i]
			if of.ID != nf.ID || of.Name != nf.Name {
				return fmt.Errorf("field %d of %s was %s in the checkpoint and is %s now: a field was inserted, removed, renamed or moved before the end, and its state would be read into another field (add new fields at the end)", of.ID, at(path), of.Name, nf.Name)
			}
			if err := c.compare(of.Type, nf.Type, join(path, of.Name)); err != nil {
				return err
			}
		}
		return nil
	case old.Op == "map" || old.Op == "mapstate":
		if err := c.compare(old.Key, now.Key, join(path, "key")); err != nil {
			return err
		}
	}
	return c.compare(old.Elem, now.Elem, path)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// baseName is a qualified type name without its package path.
func baseName(qualified string) string {
	if i := strings.LastIndexByte(qualified, '/'); i >= 0 {
		qualified = qualified[i+1:]
	}
	return qualified
}

// short names a type in a message without spelling out its fields.
func short(t *Type) string {
	if t.Name != "" {
		return baseName(t.Name)
	}
	if t.Struct {
		return "a struct"
	}
	return t.Op + "" + elemShort(t)
}

func elemShort(t *Type) string {
	switch {
	case t.Op == "map" || t.Op == "mapstate":
		return "[" + short(t.Key) + "]" + short(t.Elem)
	case t.Elem != nil:
		return short(t.Elem)
	}
	return ""
}

// TTLInner returns the schema inside ttl(...), the value schema of a
// node with state-ttl, and true; s and false for another schema.
func TTLInner(s string) (string, bool) {
	if inner, ok := strings.CutPrefix(s, "ttl("); ok && strings.HasSuffix(inner, ")") {
		return inner[:len(inner)-1], true
	}
	return s, false
}
