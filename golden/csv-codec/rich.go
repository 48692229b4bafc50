// Package csvcodec is the golden case of the generated CSV decoders: a
// record type with every kind of field they handle, read from a csv file
// with a header and written as JSON lines. want/csvcodec_test.go
// compares the generated decoder with the reflective one.
package csvcodec

import "time"

type Level string

type Score int16

type Flag bool

type Ratio float32

// Timeout is defined on time.Duration: csv reads it as an integer of
// nanoseconds, as the reflective decoder does.
type Timeout time.Duration

// Rich has a field of every kind the generated CSV decoder handles.
type Rich struct {
	ID      int64 `csv:"id"`
	I8      int8
	I16     int16
	I32     int32
	I       int
	U8      uint8
	U16     uint16
	U32     uint32
	U64     uint64
	U       uint
	P       uintptr
	F32     float32
	F64     float64
	OK      bool
	Name    string `csv:"name"`
	Renamed string `csv:"other_name,omitempty"`
	Skipped string `csv:"-"`
	hidden  string

	Level   Level
	Score   Score
	Flag    Flag
	Ratio   Ratio
	When    time.Time
	Took    time.Duration
	Timeout Timeout
}
