package codegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// pipegenPath is the package of the types user functions get from the
// runtime (pipegen.Window, pipegen.MapState).
const pipegenPath = "github.com/pipegen/pipegen"

// isMapState reports whether t is pipegen.MapState[K, V]: a field of a
// process's state whose entries are state of their own, not part of the
// struct's encoded value.
func isMapState(t *ir.Type) bool {
	return t != nil && t.Kind == ir.NamedType && t.PkgPath == pipegenPath && t.Name == "MapState" && len(t.TypeArgs) == 2
}

// mapFields are the map state fields of process node n's state struct.
func mapFields(n *ir.Node) []ir.Field {
	if n.Kind != ir.Process || n.State == nil {
		return nil
	}
	st := n.State.Struct()
	if st == nil {
		return nil
	}
	var out []ir.Field
	for _, f := range st.Fields {
		if isMapState(f.Type) {
			out = append(out, f)
		}
	}
	return out
}

// mapStateName names the state that holds the entries of map field f in
// checkpoints: "map.F".
func mapStateName(f ir.Field) string { return "map." + f.Name }

// mapCodecs emits, for each map state field F of node n, the serializers
// of its values and the codec of its entries (xFMapCodec): keyed by the
// node's key and the map's key in its order.
func (g *gen) mapCodecs(f *jen.File, cg *codecGen, n *ir.Node) {
	for _, fl := range mapFields(n) {
		uk, uv := fl.Type.TypeArgs[0], fl.Type.TypeArgs[1]
		g.valueCodec(f, cg, n, fl.Name+"MapValue", uv, false)
		name := g.global("%s"+fl.Name+"MapCodec", n)
		f.Comment(fmt.Sprintf("%s is how checkpoints write and read the entries of %s.%s, a map of %s", name, g.typeString(n.State), fl.Name, g.typeString(uk)))
		f.Comment(fmt.Sprintf("to %s per key of %q: after the key, the map's key in its order.", g.typeString(uv), n.Name))
		c := jen.Qual(statePath, "MapCodec").Call(
			jen.Line().Id(g.global("hashKey%s", n)), jen.Id(g.global("encode%sKey", n)), jen.Id(g.global("decode%sKey", n)),
			jen.Line().Add(keyOrder(uk)),
			jen.Line().Id(g.global("encode%s"+fl.Name+"MapValue", n)), jen.Id(g.global("decode%s"+fl.Name+"MapValue", n)),
			jen.Line().Lit(schema(uk)), jen.Lit(schema(uv)), jen.Line(),
		)
		if n.StateTTL > 0 {
			c = c.Dot("WithTTL").Call(millisCode(n.StateTTL)) // state-ttl
		}
		f.Var().Id(name).Op("=").Add(c)
	}
}

// keyOrder is the state.KeyOrder of map keys of type uk, a string or
// integer type.
func keyOrder(uk *ir.Type) jen.Code {
	name := "UintKeys"
	switch b := basicOf(uk); {
	case b.Name == "string":
		name = "StringKeys"
	case b.Name[0] == 'i':
		name = "IntKeys"
	}
	return jen.Qual(statePath, name).Types(typeCode(uk)).Call()
}

// mapField is the chain's field that holds the entries of map field fl.
func (p *processGen) mapField(fl ir.Field) *jen.Statement { return p.field(fl.Name + "Map") }

func (p *processGen) mapFieldDecls(s *jen.Group) {
	g, n := p.cg.g, p.n
	for _, fl := range mapFields(n) {
		uk, uv := typeCode(fl.Type.TypeArgs[0]), typeCode(fl.Type.TypeArgs[1])
		t := jen.Qual(statePath, "MemoryMap")
		if g.p.StateBackend == "pebble" {
			t = jen.Qual(pebblePath, "Map")
		}
		s.Id(p.member("%s"+fl.Name+"Map")).Op("*").Add(t).Types(typeCode(n.KeyType), uk, uv).
			Comment(fmt.Sprintf("the entries of %s.%s, per key", g.typeString(n.State), fl.Name))
	}
}

func (p *processGen) mapInit(b *jen.Group) {
	g, n := p.cg.g, p.n
	for _, fl := range mapFields(n) {
		codecVar := jen.Id(g.global("%s"+fl.Name+"MapCodec", n))
		if g.p.StateBackend == "pebble" {
			b.Add(p.mapField(fl)).Op("=").Qual(pebblePath, "OpenMap").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(mapStateName(fl)),
				jen.Id(g.global("encode%sKey", n)), codecVar)
			continue
		}
		b.Add(p.mapField(fl)).Op("=").Qual(statePath, "NewMemoryMap").Types(typeCode(n.KeyType), typeCode(fl.Type.TypeArgs[0]), typeCode(fl.Type.TypeArgs[1])).Call()
		b.Qual(runtimePath, "RestoreMemoryState").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(mapStateName(fl)), p.mapField(fl).Dot("Store").Call(), codecVar)
	}
}

// mapBind binds the map fields of the state st to key k.
func (p *processGen) mapBind(b *jen.Group) {
	for _, fl := range mapFields(p.n) {
		b.Add(p.mapField(fl)).Dot("Bind").Call(jen.Id("k"))
		b.Id("st").Dot(fl.Name).Op("=").Qual(pipegenPath, "BindMapState").Types(typeCode(fl.Type.TypeArgs[0]), typeCode(fl.Type.TypeArgs[1])).Call(p.mapField(fl))
	}
}

// mapClear clears the maps of the key bound.
func (p *processGen) mapClear() []jen.Code {
	var out []jen.Code
	for _, fl := range mapFields(p.n) {
		out = append(out, jen.Add(p.mapField(fl)).Dot("Clear").Call())
	}
	return out
}

func (p *processGen) mapSnapshot(b *jen.Group) {
	g, n := p.cg.g, p.n
	for _, fl := range mapFields(n) {
		if g.p.StateBackend == "pebble" {
			b.Qual(pebblePath, "Snapshot").Call(jen.Id("s"), jen.Id(g.constName(n)), p.mapField(fl).Dot("Store").Call())
			continue
		}
		b.Qual(runtimePath, "SnapshotMemoryState").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit(mapStateName(fl)), p.mapField(fl).Dot("Store").Call(),
			jen.Id(g.global("%s"+fl.Name+"MapCodec", n)))
	}
}

// ttlField is the TTL of a keyed node's codec (state-ttl), in
// milliseconds; nothing without one.
func ttlField(n *ir.Node) jen.Code {
	if n.StateTTL == 0 {
		return jen.Null()
	}
	return field("TTL", millisCode(n.StateTTL))
}
