package format

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestEncoders(t *testing.T) {
	type rec struct {
		Name string            `json:"name"`
		Tags map[string]string `json:"tags,omitempty"`
	}
	cases := []struct {
		name string
		enc  func(dst []byte) ([]byte, error)
		want string
	}{
		{"string", func(dst []byte) ([]byte, error) { return EncodeString(dst, "a b") }, "> a b"},
		{"stringer", func(dst []byte) ([]byte, error) { return EncodeStringer(dst, 1500*time.Millisecond) }, "> 1.5s"},
		{"json", func(dst []byte) ([]byte, error) { return EncodeJSON(dst, rec{Name: "<a & b>"}) }, `> {"name":"<a & b>"}`},
		{"json sorted keys", func(dst []byte) ([]byte, error) {
			return EncodeJSON(dst, rec{Name: "x", Tags: map[string]string{"b": "2", "a": "1"}})
		}, `> {"name":"x","tags":{"a":"1","b":"2"}}`},
		{"json string", func(dst []byte) ([]byte, error) { return EncodeJSON(dst, "line\nbreak") }, `> "line\nbreak"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.enc([]byte("> "))
			if err != nil || string(got) != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	if _, err := EncodeJSON(nil, math.NaN()); err == nil {
		t.Error("NaN encoded without error")
	}
	// The pooled encoder is fine after an error.
	if got, err := EncodeJSON(nil, 1); err != nil || string(got) != "1" {
		t.Errorf("after an error: got %q, %v", got, err)
	}
}

// click is a record as a user's package declares it; its time field is
// decoded by time.Time's own UnmarshalJSON, whose errors name no field.
type click struct {
	User string    `json:"user"`
	TS   time.Time `json:"ts"`
	N    int       `json:"n"`
}

func decodeLine[T any](f Format[T], line string) (T, error) {
	rec, _, err := f.NewDecoder().Decode([]byte(line))
	return rec, err
}

func TestJSONErrorsNameTheField(t *testing.T) {
	_, err := decodeLine(JSONFormat[click](), `{"user":"a","ts":17,"n":1}`)
	if err == nil || !strings.Contains(err.Error(), `field "ts": `) {
		t.Errorf("a bad time: %v, want the field named", err)
	}
	_, err = decodeLine(JSONFormat[click](), `{"user":"a","n":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "click.n") {
		t.Errorf("a string for an int: %v, want the field named", err)
	}
}

func TestJSONStrict(t *testing.T) {
	strict := JSONFormat[click]().(Strictable[click]).Strict()
	cases := []struct {
		line, want string // want: "" for a record
	}{
		{`{"user":"a","ts":"2024-03-01T08:00:00Z","n":1}`, ""},
		{`{"User":"a","TS":"2024-03-01T08:00:00Z","N":1}`, ""}, // keys match as encoding/json matches them
		{`{"user":"a","time":"2024-03-01T08:00:00Z","n":1}`, `unknown field "time" and missing field "ts" (strict)`},
		{`{"user":"a","n":1}`, `missing field "ts" (strict)`},
		{`{}`, `missing field "user", "ts", "n" (strict)`},
		{`null`, `a record is a JSON object, got null`},
		{`[1]`, `a record is a JSON object, got [1]`},
	}
	for _, c := range cases {
		_, err := decodeLine(strict, c.line)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.line, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.line, err, c.want)
		}
	}
	// Without strict, the same lines are records with zero fields.
	if _, err := decodeLine(JSONFormat[click](), `{"user":"a","time":"2024-03-01T08:00:00Z"}`); err != nil {
		t.Errorf("lenient: %v", err)
	}
}

func TestCSVStrict(t *testing.T) {
	type trade struct {
		Sym string
		Qty int
	}
	f, err := CSVFormat[trade](',', true)
	if err != nil {
		t.Fatal(err)
	}
	lenient := f.NewDecoder()
	if err := lenient.Header([]byte("sym")); err != nil {
		t.Errorf("lenient header without qty: %v", err)
	}
	strict := f.(Strictable[trade]).Strict().NewDecoder()
	if err := strict.Header([]byte("sym")); err == nil || !strings.Contains(err.Error(), "no column for Qty of trade (strict)") {
		t.Errorf("strict header without qty: %v", err)
	}
	if err := f.(Strictable[trade]).Strict().NewDecoder().Header([]byte("qty,sym")); err != nil {
		t.Errorf("strict header with every column: %v", err)
	}
}
