package schema

import (
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// acc is the schema codegen writes for a struct with named, nested,
// pointer, slice, array, map and recursive fields (from golden/state-types).
const acc = "example.com/p.Acc{1 Count uint32; 2 Max example.com/p.Celsius(float64); 3 Span example.com/p.Span{1 First time.Time; 2 Width time.Duration}; 4 Hot *example.com/p.Inner{1 Name string}; 5 Best *example.com/p.Inner; 6 Items []example.com/p.Inner; 7 ByTag map[string][]int; 8 Top [3]float32; 9 Notes []{1 N int; 2 S *string}; 10 Tree example.com/p.Node{1 Name string; 2 Kids []example.com/p.Node}}"

func TestParseRoundTrip(t *testing.T) {
	for _, s := range []string{acc, "int64", "string", "time.Time", "[2][2]int8", "map[example.com/p.Label]time.Time", "**int", "example.com/p.Tags([]example.com/p.Label)"} {
		got, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if got.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, got.String())
		}
	}
	for _, bad := range []string{"", "{1 A int", "{x A int}", "map[int", "[x]int", "int)"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestCompatible(t *testing.T) {
	cases := []struct {
		name, old, now, want string // want: "" for compatible, else part of the error
	}{
		{"same", acc, acc, ""},
		{"field added at the end", "p.A{1 N int64}", "p.A{1 N int64; 2 M string}", ""},
		{"field removed from the end", "p.A{1 N int64; 2 M string}", "p.A{1 N int64}", ""},
		{"int64 to uint64", "p.A{1 N int64}", "p.A{1 N uint64}", "p.A.N was int64 in the checkpoint and is uint64 now"},
		{"key type", "string", "int64", "the type was string in the checkpoint and is int64 now"},
		{"field inserted", "p.A{1 N int64; 2 M string}", "p.A{1 X bool; 2 N int64; 3 M string}", "field 1 of p.A was N in the checkpoint and is X now"},
		{"nested field", acc, strings.Replace(acc, "2 Width time.Duration", "2 Width int64", 1), "p.Acc.Span.Width was time.Duration in the checkpoint and is int64 now"},
		{"named type renamed", "p.A{1 N p.Celsius(float64)}", "p.A{1 N p.Kelvin(float64)}", "p.A.N was p.Celsius in the checkpoint and is p.Kelvin now"},
		{"underlying changed", "p.A{1 N p.Celsius(float64)}", "p.A{1 N p.Celsius(float32)}", "p.A.N was float64 in the checkpoint and is float32 now"},
		{"slice to array", "p.A{1 N []int}", "p.A{1 N [2]int}", "p.A.N was []int in the checkpoint and is [2]int now"},
		{"map key", "p.A{1 N map[string]int}", "p.A{1 N map[int]int}", "p.A.N.key was string in the checkpoint and is int now"},
		{"recursive type unchanged", acc, acc + "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CompatibleStrings(c.old, c.now)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("incompatible: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestCompatibleJoin(t *testing.T) {
	if err := CompatibleStrings("p.L{1 A int} + p.R{1 B int}", "p.L{1 A int} + p.R{1 B int; 2 C int}"); err != nil {
		t.Errorf("a field added to the right side: %v", err)
	}
	if err := CompatibleStrings("p.L{1 A int} + p.R{1 B int}", "p.L{1 A int} + p.R{1 B string}"); err == nil || !strings.Contains(err.Error(), "p.R.B was int") {
		t.Errorf("a changed field of the right side: %v", err)
	}
}

// FuzzParse: Parse never panics, and what it reads writes back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{acc, "int64", "map[string]*p.A{1 X []int}", "{1 A {1 B int}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ty, err := Parse(s)
		if err != nil {
			return
		}
		if again, err := Parse(ty.String()); err != nil || again.String() != ty.String() {
			t.Errorf("Parse(%q) writes %q, which reads as %v, %v", s, ty.String(), again, err)
		}
	})
}

// TestMapStateSchema: a map state field is compared like a map (its key
// and value), and is not a map.
func TestMapStateSchema(t *testing.T) {
	old := "p.S{1 N int; 2 Seen mapstate[string]p.V{1 A int}}"
	if ty, err := Parse(old); err != nil || ty.String() != old {
		t.Fatalf("Parse(%q) = %v, %v", old, ty, err)
	}
	if err := CompatibleStrings(old, "p.S{1 N int; 2 Seen mapstate[string]p.V{1 A int; 2 B string}}"); err != nil {
		t.Errorf("a field added to the map's value: %v", err)
	}
	for now, want := range map[string]string{
		"p.S{1 N int; 2 Seen mapstate[int64]p.V{1 A int}}":     "Seen.key was string in the checkpoint and is int64 now",
		"p.S{1 N int; 2 Seen mapstate[string]p.V{1 A string}}": "p.S.Seen.A was int in the checkpoint and is string now",
		"p.S{1 N int; 2 Seen map[string]p.V{1 A int}}":         "p.S.Seen was mapstate[string]p.V in the checkpoint and is map[string]p.V now",
	} {
		if err := CompatibleStrings(old, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", now, err, want)
		}
	}
}

// TestTTLSchema: the state of a node with a state-ttl, ttl(S), reads a
// checkpoint of ttl(S') when S reads S'; a state-ttl added or removed is
// refused, saying so.
func TestTTLSchema(t *testing.T) {
	if err := CompatibleStrings("ttl(p.S{1 N int})", "ttl(p.S{1 N int; 2 M string})"); err != nil {
		t.Errorf("a field added under a ttl: %v", err)
	}
	if err := CompatibleStrings("ttl(p.S{1 N int})", "ttl(p.S{1 N string})"); err == nil || !strings.Contains(err.Error(), "p.S.N was int") {
		t.Errorf("a changed field under a ttl: %v", err)
	}
	if err := CompatibleStrings("p.S{1 N int}", "ttl(p.S{1 N int})"); err == nil || !strings.Contains(err.Error(), "has a state-ttl now and had none") {
		t.Errorf("a ttl added: %v", err)
	}
	if err := CompatibleStrings("ttl(p.S{1 N int})", "p.S{1 N int}"); err == nil || !strings.Contains(err.Error(), "had a state-ttl in the checkpoint and has none now") {
		t.Errorf("a ttl removed: %v", err)
	}
}
