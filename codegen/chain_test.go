package codegen

import (
	"testing"

	"github.com/pipegen/pipegen/ir"
)

// TestGeneratorBatch: a generator's chain makes about 4 KB of records at
// a time, at most 256, and one at a time when a record is over 2 KB or
// of a size not known (golden/generator-large-record runs that form).
func TestGeneratorBatch(t *testing.T) {
	event := structOf("Type", basic("int"), "Bid", arrayOf(8, basic("int64"))) // 72 bytes
	for _, c := range []struct {
		name string
		t    *ir.Type
		want int64
	}{
		{"72-byte struct", named("Event", event), 56},
		{"int", basic("int"), 256},
		{"2 KB", arrayOf(2048, basic("byte")), 2},
		{"3000 bytes", arrayOf(3000, basic("byte")), 1},
		{"opaque", &ir.Type{Kind: ir.NamedType, Name: "Opaque"}, 1},
	} {
		if got := generatorBatch(c.t); got != c.want {
			t.Errorf("%s: a batch of %d records, want %d", c.name, got, c.want)
		}
	}
}
