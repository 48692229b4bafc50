package format

import (
	"math"
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
