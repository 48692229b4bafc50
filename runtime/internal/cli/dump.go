package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/schema"
)

// dumpNode prints the keyed state of node (its name or uid) in savepoint
// l as JSON lines, {"keyGroup":G,"key":K,"value":V}, decoding the entries
// by the schemas the savepoint records (the wire format the generated
// serializers write: codec's, fields tagged with their ids). The entries
// of a process's map state (a pipegen.MapState field F of its state) are
// lines of their own, {"keyGroup":G,"key":K,"map":"F","mapKey":MK,
// "value":V}. With a state-ttl (value schema ttl(S)) each line has the
// value's write time too, "written" (Unix milliseconds). Windows, joins
// and timers keep their state in layouts of their own and are not
// dumped.
func dumpNode(cfg *config.Config, l *storage.Loaded, node string, w io.Writer) error {
	var ns *storage.NodeState
	for i := range l.Manifest.Nodes {
		if n := &l.Manifest.Nodes[i]; n.Name == node || n.UID == node {
			ns = n
		}
	}
	if ns == nil {
		return fmt.Errorf("the savepoint has no node %q", node)
	}
	for _, n := range cfg.Nodes {
		if n.UID == ns.UID && (n.Window != "" || n.Kind == "join") {
			return fmt.Errorf("%s keeps its state in the layout of its window or join engine, which --dump does not read", node)
		}
	}
	if ns.KeySchema == "" || len(ns.Files) == 0 {
		return fmt.Errorf("%s has no keyed state in the savepoint", node)
	}
	kt, err := schema.Parse(ns.KeySchema)
	if err != nil {
		return err
	}
	// With a state-ttl, each value follows its write time.
	inner, ttl := schema.TTLInner(ns.ValueSchema)
	vt, err := schema.Parse(inner)
	if err != nil {
		return err
	}
	var bt *schema.Type // the broadcast state's map type
	if ns.BroadcastSchema != "" {
		if bt, err = schema.Parse(ns.BroadcastSchema); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(w)
	d := &decoder{}
	for _, f := range ns.Files {
		var err error
		field, isMap := strings.CutPrefix(f.State, "map.")
		switch {
		case isMap:
			err = dumpMap(l, f, field, kt, vt, ttl, d, enc)
		case f.State == "broadcast" && bt != nil:
			m := d.under(bt)
			err = eachEntry(l, f, enc, func(kg int, er *codec.Reader) map[string]any {
				return map[string]any{"broadcast": true, "key": d.value(er, m.Key), "value": d.value(er, m.Elem)}
			})
		case f.State == "":
			err = eachEntry(l, f, enc, func(kg int, er *codec.Reader) map[string]any {
				line := map[string]any{"keyGroup": kg, "key": d.value(er, kt)}
				if ttl {
					line["written"] = er.Varint()
				}
				line["value"] = d.value(er, vt)
				return line
			})
		}
		// Other states (a process's timers) are the runtime's own.
		if err != nil {
			return err
		}
	}
	return nil
}

// eachEntry prints a JSON line per entry of state file f: what line makes
// of the entry's reader, in key group kg.
func eachEntry(l *storage.Loaded, f storage.StateFile, enc *json.Encoder, line func(kg int, er *codec.Reader) map[string]any) error {
	return l.ReadSections(f, 0, math.MaxInt, func(kg int, sec []byte) error { // every section
		sr := codec.NewReader(sec)
		for sr.More() {
			er := sr.Nested()
			v := line(kg, er)
			if err := er.Err(); err != nil {
				return err
			}
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
		return nil
	})
}

// decoder reads values by their schemas; defs are the named types the
// schemas spell out (a later mention carries the name only).
type decoder struct{ defs map[string]*schema.Type }

func (d *decoder) define(t *schema.Type) {
	if t == nil {
		return
	}
	if d.defs == nil {
		d.defs = map[string]*schema.Type{}
	}
	if t.Name != "" && t.Underlying != nil {
		if _, ok := d.defs[t.Name]; ok {
			return
		}
		d.defs[t.Name] = t.Underlying
		d.define(t.Underlying)
		return
	}
	d.define(t.Key)
	d.define(t.Elem)
	for _, f := range t.Fields {
		d.define(f.Type)
	}
}

// under is the structure of t: a named type's underlying type, or nil for
// a basic one.
func (d *decoder) under(t *schema.Type) *schema.Type {
	d.define(t)
	for t != nil && t.Name != "" {
		u := d.defs[t.Name]
		if u == nil {
			return t // basic: its name says how it is written
		}
		t = u
	}
	return t
}

// value reads one value of type t.
func (d *decoder) value(r *codec.Reader, t *schema.Type) any {
	u := d.under(t)
	switch {
	case u.Name == "time.Time":
		return r.Time()
	case u.Name == "time.Duration":
		return r.Varint()
	case u.Name == "bool":
		return r.Bool()
	case u.Name == "string":
		return r.String()
	case u.Name == "float64":
		return r.Float64()
	case u.Name == "float32":
		return r.Float32()
	case u.Name != "" && (strings.HasPrefix(u.Name, "int") || u.Name == "rune"):
		return r.Varint()
	case u.Name != "":
		return r.Uvarint()
	case u.Op == "*":
		if !r.Bool() {
			return nil
		}
		return d.value(r, u.Elem)
	case (u.Op == "[]") && d.isByte(u.Elem):
		return r.ByteSlice()
	case u.Op == "map":
		sub := r.Nested()
		n := sub.Count()
		out := make([][2]any, 0, n)
		for range n {
			k := d.value(sub, u.Key)
			out = append(out, [2]any{k, d.value(sub, u.Elem)})
		}
		return out
	case u.Op != "":
		sub := r.Nested()
		n := sub.Count()
		out := make([]any, 0, n)
		for range n {
			out = append(out, d.value(sub, u.Elem))
		}
		return out
	}
	sub := r.Nested()
	out := map[string]any{}
	for sub.More() {
		id, wt := sub.Tag()
		if id == 0 || int(id) > len(u.Fields) {
			sub.Skip(wt)
			continue
		}
		f := u.Fields[id-1]
		ft := d.under(f.Type)
		switch {
		case ft.Op == "*" && d.under(ft.Elem).Op != "*":
			out[f.Name] = d.value(sub, ft.Elem) // a set pointer field is its value
		case ft.Op == "*":
			out[f.Name] = d.value(sub.Nested(), ft.Elem)
		default:
			out[f.Name] = d.value(sub, f.Type)
		}
	}
	return out
}

func (d *decoder) isByte(t *schema.Type) bool {
	u := d.under(t)
	return u.Name == "uint8" || u.Name == "byte"
}

// dumpMap prints the entries of the map state of field of the state type
// vt in file f: each the node's key (of type kt), then the map's key in
// its order (codec's ordered encodings), then the value.
func dumpMap(l *storage.Loaded, f storage.StateFile, field string, kt, vt *schema.Type, ttl bool, d *decoder, enc *json.Encoder) error {
	var mt *schema.Type
	if st := d.under(vt); st != nil {
		for _, fl := range st.Fields {
			if fl.Name == field && fl.Type.Op == "mapstate" {
				mt = fl.Type
			}
		}
	}
	if mt == nil {
		return fmt.Errorf("%s holds the map state %s, which the state's schema %s has no pipegen.MapState field for", f.Name, field, vt)
	}
	mk := d.under(mt.Key)
	return eachEntry(l, f, enc, func(kg int, er *codec.Reader) map[string]any {
		k := d.value(er, kt)
		var uk any
		switch {
		case mk.Name == "string":
			uk = er.OrderedString()
		case strings.HasPrefix(mk.Name, "int"):
			uk = er.OrderedInt()
		default:
			uk = er.OrderedUint()
		}
		line := map[string]any{"keyGroup": kg, "key": k, "map": field, "mapKey": uk}
		if ttl {
			line["written"] = er.Varint()
		}
		line["value"] = d.value(er, mt.Elem)
		return line
	})
}
