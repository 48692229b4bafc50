// Package docs holds the project's documentation; its tests check that
// the documentation and the files generated into it agree with the code.
package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/runtime/settings"
)

// TestSchemaFile checks that pipeline.schema.json is what `pipegen schema`
// prints; go test ./docs -update rewrites it.
func TestSchemaFile(t *testing.T) {
	goldenfile.Check(t, "pipeline.schema.json", settings.JSONSchema())
}

// TestSchemaChecksPipelines validates this repository's pipeline files
// against the schema: those pipegen compiles must pass, those with
// mistakes in keys or values must not.
func TestSchemaChecksPipelines(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(settings.JSONSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	v := &validator{root: schema}
	good, _ := filepath.Glob("../examples/*/pipeline.yaml")
	more, _ := filepath.Glob("../examples/annotated/testdata/*.yaml")
	good = append(good, more...)
	good = append(good, "../internal/e2e/restart/pipeline.yaml")
	cases, _ := filepath.Glob("../golden/*/pipeline.yaml")
	for _, c := range cases {
		if _, err := os.Stat(filepath.Join(filepath.Dir(c), "want", "stderr.txt")); err != nil {
			good = append(good, c)
		}
	}
	if len(good) < 10 {
		t.Fatalf("found %d pipelines that compile, want at least 10", len(good))
	}
	for _, path := range good {
		if errs := v.file(t, path); len(errs) > 0 {
			t.Errorf("%s does not validate:\n\t%s", path, strings.Join(errs, "\n\t"))
		}
	}
	for _, name := range []string{"bad-keys", "bad-options", "bad-version"} {
		if errs := v.file(t, filepath.Join("..", "golden", name, "pipeline.yaml")); len(errs) == 0 {
			t.Errorf("golden/%s validates, but pipegen refuses it", name)
		}
	}
}

// validator checks a value against the part of JSON Schema draft-07 that
// JSONSchema writes.
type validator struct {
	root map[string]any
}

func (v *validator) file(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []string{err.Error()} // a duplicate key
	}
	return v.check(v.root, doc, "")
}

func (v *validator) check(s map[string]any, x any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		return v.check(v.root["definitions"].(map[string]any)[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any), x, at)
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	for _, sub := range schemas(s["allOf"]) {
		errs = append(errs, v.check(sub, x, at)...)
	}
	if alts := schemas(s["anyOf"]); alts != nil && v.matches(alts, x, at) == 0 {
		fail("matches none of anyOf")
	}
	if alts := schemas(s["oneOf"]); alts != nil {
		if n := v.matches(alts, x, at); n != 1 {
			fail("matches %d of oneOf, want one", n)
		}
	}
	if c, ok := s["const"]; ok && !equal(c, x) {
		fail("%v is not %v", x, c)
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(c any) bool { return equal(c, x) }) {
		fail("%v is not one of %v", x, e)
	}
	if typ, ok := s["type"].(string); ok && !hasType(typ, x) {
		fail("%v (%T) is not of type %s", x, x, typ)
		return errs
	}
	switch x := x.(type) {
	case string:
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			fail("%q does not match %s", x, p)
		}
		if n, ok := s["minLength"].(float64); ok && utf8.RuneCountInString(x) < int(n) {
			fail("%q is shorter than %v", x, n)
		}
		if n, ok := s["maxLength"].(float64); ok && utf8.RuneCountInString(x) > int(n) {
			fail("%q is longer than %v", x, n)
		}
	case int, float64:
		if m, ok := s["minimum"].(float64); ok && number(x) < m {
			fail("%v is less than %v", x, m)
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for k, val := range x {
			if p, ok := props[k].(map[string]any); ok {
				errs = append(errs, v.check(p, val, at+"."+k)...)
			} else if s["additionalProperties"] == false {
				fail("unknown key %q", k)
			}
		}
		for _, r := range list(s["required"]) {
			if _, ok := x[r.(string)]; !ok {
				fail("missing %q", r)
			}
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && len(x) < int(n) {
			fail("%d items, want at least %v", len(x), n)
		}
		if n, ok := s["maxItems"].(float64); ok && len(x) > int(n) {
			fail("%d items, want at most %v", len(x), n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range x {
				errs = append(errs, v.check(items, item, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func (v *validator) matches(alts []map[string]any, x any, at string) int {
	n := 0
	for _, alt := range alts {
		if len(v.check(alt, x, at)) == 0 {
			n++
		}
	}
	return n
}

func list(x any) []any {
	l, _ := x.([]any)
	return l
}

func schemas(x any) []map[string]any {
	var out []map[string]any
	for _, s := range list(x) {
		out = append(out, s.(map[string]any))
	}
	return out
}

func number(x any) float64 {
	if i, ok := x.(int); ok {
		return float64(i)
	}
	return x.(float64)
}

func equal(c, x any) bool {
	switch x.(type) {
	case int, float64:
		f, ok := c.(float64)
		return ok && f == number(x)
	}
	return c == x
}

func hasType(typ string, x any) bool {
	switch x := x.(type) {
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case int:
		return typ == "integer" || typ == "number"
	case float64:
		return typ == "number" || typ == "integer" && x == float64(int64(x))
	case map[string]any:
		return typ == "object"
	case []any:
		return typ == "array"
	}
	return false
}
