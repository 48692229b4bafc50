// Package jsoncodec is the golden case of the generated JSON-lines codecs:
// a record type with every kind of field they handle, read from a jsonl
// file and written to a jsonl file. want/jsoncodec_test.go compares the
// generated decoder and encoder with encoding/json.
package jsoncodec

import "time"

type Level string

type Score int16

type Tags []string

type Point struct {
	X, Y  float64
	Label string `json:"label,omitempty"`
}

// Rich has a field of every kind the generated codec handles.
type Rich struct {
	ID       int64   `json:"id"`
	I8       int8    `json:"i8"`
	I16      int16   `json:"i16"`
	I32      int32   `json:"i32"`
	I        int     `json:"i"`
	U8       uint8   `json:"u8"`
	U16      uint16  `json:"u16"`
	U32      uint32  `json:"u32"`
	U64      uint64  `json:"u64"`
	F32      float32 `json:"f32"`
	F64      float64 `json:"f64"`
	OK       bool    `json:"ok"`
	Name     string  `json:"name"`
	Untagged string
	Renamed  string `json:"other_name"`
	BadTag   string `json:"a\"b"`
	Skipped  string `json:"-"`
	Dash     string `json:"-,"`
	hidden   string

	Level    Level             `json:"level"`
	Score    Score             `json:"score"`
	When     time.Time         `json:"when"`
	Took     time.Duration     `json:"took"`
	Data     []byte            `json:"data"`
	Tags     Tags              `json:"tags"`
	Ints     []int             `json:"ints"`
	Grid     [2][2]int8        `json:"grid"`
	Ptr      *int64            `json:"ptr"`
	PtrPoint *Point            `json:"ptr_point"`
	Point    Point             `json:"point"`
	Points   []Point           `json:"points"`
	Attrs    map[string]string `json:"attrs"`
	Counts   map[Level]int     `json:"counts"`
	Inline   struct {
		A int    `json:"a"`
		B string `json:"b,omitempty"`
	} `json:"inline"`

	MaybeName  string         `json:"maybe_name,omitempty"`
	MaybeInt   int            `json:"maybe_int,omitempty"`
	MaybeFloat float64        `json:"maybe_float,omitempty"`
	MaybeBool  bool           `json:"maybe_bool,omitempty"`
	MaybePtr   *string        `json:"maybe_ptr,omitempty"`
	MaybeList  []int          `json:"maybe_list,omitempty"`
	MaybeMap   map[string]int `json:"maybe_map,omitempty"`
	ZeroFloat  float64        `json:"zero_float,omitzero"`
	ZeroTime   time.Time      `json:"zero_time,omitzero"`
	ZeroPoint  Point          `json:"zero_point,omitzero"`
	Both       []int          `json:"both,omitempty,omitzero"`
}
