package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/diag"
)

// directiveOf splits one directive, at line 7 column 1 of p.go.
func directiveOf(t *testing.T, text string) (*directive, []diag.Diagnostic) {
	t.Helper()
	p := &annotationParser{reporter: reporter{diags: &diag.List{}, syntax: directiveSyntax{}}}
	d := p.directive(text, diag.Pos{File: "p.go", Line: 7, Col: 1})
	return d, p.diags.Items()
}

func TestDirectiveSyntax(t *testing.T) {
	d, diags := directiveOf(t, `//pipegen:join pairs inputs=a,b  key=KA,KB	between=-5s,5s path="a b\t\"c\"" empty=""`)
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if d.kind.V != "join" || d.kind.Pos.Col != 11 || d.name.V != "pairs" || d.name.Pos.Col != 16 {
		t.Errorf("kind %+v, name %+v", d.kind, d.name)
	}
	var got []string
	for _, a := range d.args {
		s := fmt.Sprintf("%s@%d=%q@%d", a.key.V, a.key.Pos.Col, a.value.V, a.value.Pos.Col)
		for _, item := range a.list {
			s += fmt.Sprintf(" [%s@%d]", item.V, item.Pos.Col)
		}
		got = append(got, s)
	}
	want := []string{
		`inputs@22="a,b"@29 [a@29] [b@31]`,
		`key@34="KA,KB"@38 [KA@38] [KB@41]`,
		`between@44="-5s,5s"@52 [-5s@52] [5s@56]`,
		`path@59="a b\t\"c\""@64 [a b	"c"@64]`,
		`empty@77=""@83 [@83]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("arguments:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDirectiveErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string // "col: message part"
	}{
		{`//pipegen:mapp m`, []string{`11: unknown directive //pipegen:mapp, did you mean "map"?`}},
		{`//pipegen:`, []string{`11: empty directive`}},
		{`//pipegen:map input=lines`, []string{`11: //pipegen:map needs a name first`}},
		{`//pipegen:map name=m input=lines`, []string{`15: the name comes first, without name=`}},
		{`//pipegen:map m lines`, []string{`17: unexpected "lines": after the name, options are written key=value`}},
		{`//pipegen:map m input=a input=b`, []string{`25: duplicate key "input" in //pipegen:map m (first at column 17)`}},
		{`//pipegen:map m input=`, []string{`17: input has no value`}},
		{`//pipegen:map m =x`, []string{`17: a value without a key`}},
		{`//pipegen:source s path="a`, []string{`25: path: the quoted value does not end`}},
		{`//pipegen:source s path="a"b`, []string{`28: path: unexpected text after the quoted value`}},
		{`//pipegen:source s path="\q"`, []string{`25: path: malformed quoted value`}},
		{`//pipegen:source s "path"`, []string{`20: a quoted value follows a key`}},
	} {
		_, diags := directiveOf(t, tc.text)
		var got []string
		for _, d := range diags {
			got = append(got, fmt.Sprintf("%d: %s", d.Pos.Col, d.Msg))
		}
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s:\n  got  %q\n  want %q", tc.text, got, tc.want)
		}
	}
}

// writePackage writes a module with one package of the given files into
// a temporary directory.
func writePackage(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/p\n\ngo 1.26\n"
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseAnnotations(t *testing.T) {
	dir := writePackage(t, map[string]string{
		// b.go sorts after a.go: its directives come second.
		"b.go": `package p

//pipegen:sink out pipeline=one input=sum connector=file path="out dir" format=jsonl

// Sum adds up.
//
//pipegen:aggregate sum pipeline=one input=gen key=Key result=Res merge=Merge emit=final window.session=1m window.time=processing allowed-lateness=0 uid=sum-v2 parallelism=3
func Sum(acc *int, n int) { *acc += n }
`,
		"a.go": `package p

//pipegen:pipeline one parallelism=2 max-parallelism=16 checkpoint.mode=none checkpoint.retain=4 restart.strategy=none state.backend=memory
//pipegen:pipeline two

// Gen counts.
//
//pipegen:source gen pipeline=one connector=generator rate=10 timestamps.extract=At timestamps.idle-timeout=5s
//pipegen:source gen2 pipeline=two connector=generator
func Gen(seq uint64) (int, bool) { return int(seq), seq < 10 }

//pipegen:union both pipeline=two inputs=gen2,gen2

// Pair pairs.
//
//pipegen:join pairs pipeline=two inputs=gen2,both key=K1,K2 between=-5s,5s
func Pair(a, b int) int { return a + b }

// Proc processes.
//
//pipegen:process proc pipeline=two input=pairs key=K1 on-timer=Timer
func Proc() {}
`,
	})
	a, diags := ParseAnnotations(dir)
	if diags.Len() > 0 {
		t.Fatalf("diagnostics:\n%s", diags.Format(dir))
	}
	if a.PkgPath != "example.com/p" || a.PkgName != "p" || len(a.Specs) != 2 {
		t.Fatalf("package %s (%s), %d specs", a.PkgPath, a.PkgName, len(a.Specs))
	}
	one, two := a.Specs[0], a.Specs[1]
	if one.Name.V != "one" || filepath.Base(one.File) != "a.go" || one.Version != SupportedVersion || one.pkg == nil {
		t.Errorf("spec one: name %q, file %q, version %d", one.Name.V, one.File, one.Version)
	}
	set := one.Settings
	if set["parallelism"].V != "2" || set["max-parallelism"].V != "16" || set["checkpoint.mode"].V != "none" || set["checkpoint.retain"].V != "4" ||
		set["restart.strategy"].V != "none" || set["state.backend"].V != "memory" || set["checkpoint.mode"].Pos.Col != 73 {
		t.Errorf("settings of one: %+v", one.Settings)
	}
	if len(one.Sources) != 1 || len(one.Operators) != 1 || len(one.Sinks) != 1 || len(two.Sources) != 1 || len(two.Operators) != 3 {
		t.Fatalf("nodes: one %d/%d/%d, two %d/%d", len(one.Sources), len(one.Operators), len(one.Sinks), len(two.Sources), len(two.Operators))
	}
	gen := one.Sources[0]
	if o, _ := gen.Option("generate"); o.Value.V != "Gen" || !o.Value.Set || o.Value.Pos.Col != 11 || o.Value.Pos.Line != 8 {
		t.Errorf("generate option %+v", o)
	}
	if o, _ := gen.Option("rate"); o.Value.V != "10" {
		t.Errorf("rate option %+v", o)
	}
	if gen.Timestamps == nil || gen.Timestamps.Extract.V != "At" || gen.Timestamps.IdleTimeout.V != "5s" || gen.Section != Sources || gen.Kind.V != "source" {
		t.Errorf("source gen: %+v", gen)
	}
	sum := one.Operators[0]
	if sum.Kind.V != "aggregate" || sum.Add.V != "Sum" || sum.Result.V != "Res" || sum.Merge.V != "Merge" || sum.Emit.V != "final" ||
		sum.UID.V != "sum-v2" || sum.Parallelism.V != "3" || sum.AllowedLateness.V != "0" ||
		len(sum.Keys) != 1 || sum.Keys[0].V != "Key" || len(sum.Inputs) != 1 || sum.Inputs[0].V != "gen" {
		t.Errorf("aggregate sum: %+v", sum)
	}
	if sum.Window == nil || sum.Window.Session.V != "1m" || sum.Window.Time.V != "processing" {
		t.Errorf("window of sum: %+v", sum.Window)
	}
	if out := one.Sinks[0]; out.Connector.V != "file" || len(out.Options) != 2 || out.Options[0].Value.V != "out dir" {
		t.Errorf("sink out: %+v", out)
	}
	if len(two.Operators) != 3 {
		t.Fatalf("%d operators in two", len(two.Operators))
	}
	if both := two.Operators[0]; both.Kind.V != "union" || len(both.Inputs) != 2 {
		t.Errorf("union both: %+v", both)
	}
	if pairs := two.Operators[1]; pairs.Kind.V != "join" || pairs.Apply.V != "Pair" || len(pairs.Keys) != 2 || pairs.Keys[1].V != "K2" ||
		len(pairs.Between) != 2 || pairs.Between[0].V != "-5s" || pairs.Between[1].V != "5s" {
		t.Errorf("join pairs: %+v", pairs)
	}
	if proc := two.Operators[2]; proc.Kind.V != "process" || proc.Fn.V != "Proc" || proc.OnTimer.V != "Timer" {
		t.Errorf("process proc: %+v", proc)
	}
}

func TestParseAnnotationsPackageErrors(t *testing.T) {
	dir := writePackage(t, map[string]string{"p.go": "package p\n\nfunc F() { undefined() }\n"})
	a, diags := ParseAnnotations(dir)
	if a != nil || !strings.Contains(diags.Format(dir), "p.go:3:12: undefined: undefined") {
		t.Errorf("ParseAnnotations of a broken package: %v\n%s", a, diags.Format(dir))
	}
}
