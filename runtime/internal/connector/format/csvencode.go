package format

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/textcodec"
)

// CSVEncoder writes records of the struct T as CSV lines: the columns
// CSVFormat reads (the exported fields not tagged `csv:"-"`, in
// declaration order), separated by the delimiter, each cell quoted as
// encoding/csv's Writer quotes it (a cell with the delimiter, a quote,
// \r or \n, or a leading space, in quotes with its quotes doubled), so
// that CSVFormat and encoding/csv's Reader read back the same record.
//
// Cells: strings as they are; bools and integers as strconv writes them;
// floats as encoding/json writes them (the shortest decimal that reads
// back the same, with an exponent below 1e-6 and from 1e21), and NaN and
// the infinities as NaN, +Inf and -Inf, which strconv.ParseFloat reads
// back; time.Time in RFC 3339 with nanoseconds; time.Duration in Go
// syntax (1h2m0.5s). A time whose year is outside 0-9999 or whose zone
// offset is not a whole number of minutes under a day has no RFC 3339
// form that reads back the same instant: encoding it is an error. A
// record of one column whose cell is empty is written as "", since an
// empty line holds no record.
//
// This encoder is the reference: a generated encoder (CSVEncodeFunc)
// writes the same bytes faster.
type CSVEncoder[T any] struct {
	delim string
	cols  []csvOutColumn
	typ   reflect.Type
	fast  CSVEncodeFunc[T]
	w     *textcodec.CSVWriter
}

// CSVEncodeFunc is a generated CSV encoder: it appends the line of v to
// dst as the reflective encoder would, with the delimiter of w, or
// returns false for a record it does not handle (a time without an RFC
// 3339 form), which then goes through the reflective encoder, which
// returns its error.
type CSVEncodeFunc[T any] func(dst []byte, v T, w *textcodec.CSVWriter) ([]byte, bool)

// csvOutColumn is a field the encoder writes.
type csvOutColumn struct {
	name   string
	field  string
	off    uintptr
	format func(dst []byte, p unsafe.Pointer) ([]byte, error)
}

// NewCSVEncoder makes the encoder of T with delimiter; fast, when not
// nil, is a generated encoder.
func NewCSVEncoder[T any](delimiter rune, fast CSVEncodeFunc[T]) (*CSVEncoder[T], error) {
	if err := checkDelimiter(delimiter); err != nil {
		return nil, err
	}
	t := reflect.TypeFor[T]()
	cols, err := csvColumns(t)
	if err != nil {
		return nil, err
	}
	e := &CSVEncoder[T]{delim: string(delimiter), typ: t, fast: fast, w: textcodec.NewCSVWriter(delimiter)}
	for _, c := range cols {
		e.cols = append(e.cols, csvOutColumn{name: c.name, field: c.field, off: c.off, format: csvFormatter(c.typ)})
	}
	return e, nil
}

func checkDelimiter(delimiter rune) error {
	switch {
	case delimiter == '"' || delimiter == '\r' || delimiter == '\n':
		return fmt.Errorf("csv delimiter %q cannot be a quote or a line break", delimiter)
	case !utf8.ValidRune(delimiter) || delimiter == utf8.RuneError:
		return fmt.Errorf("csv delimiter %q is not a valid character", delimiter)
	}
	return nil
}

// CSVEncoderFor is the encoder of sink n, with its delimiter option and
// the generated encoder fast (nil for none); a bad option stops the job.
func CSVEncoderFor[T any](n *config.NodeConfig, fast CSVEncodeFunc[T]) *CSVEncoder[T] {
	delim := ','
	if d := n.Option("delimiter"); d != "" {
		r, size := utf8.DecodeRuneInString(d)
		if size != len(d) {
			fault.Abortf("sinks.%s: delimiter wants one character, got %q", n.Name, d)
		}
		delim = r
	}
	e, err := NewCSVEncoder[T](delim, fast)
	if err != nil {
		fault.Abortf("sinks.%s: %w", n.Name, err)
	}
	return e
}

// Header is the header line of the columns, without a line ending: their
// `csv` tags or field names, quoted as cells are.
func (e *CSVEncoder[T]) Header() []byte {
	var b []byte
	for i, c := range e.cols {
		if i > 0 {
			b = append(b, e.delim...)
		}
		b = e.appendCell(b, c.name)
	}
	return b
}

// Encode appends the line of v, without a line ending. It is an Encoder.
func (e *CSVEncoder[T]) Encode(dst []byte, v T) ([]byte, error) {
	if e.fast != nil {
		if b, ok := e.fast(dst, v, e.w); ok {
			return b, nil
		}
	}
	return e.EncodeReflect(dst, v)
}

// EncodeReflect is Encode without the generated encoder: the reference
// the generated one is tested against.
func (e *CSVEncoder[T]) EncodeReflect(dst []byte, v T) ([]byte, error) {
	base := unsafe.Pointer(&v)
	var cell []byte
	for i, c := range e.cols {
		if i > 0 {
			dst = append(dst, e.delim...)
		}
		var err error
		cell, err = c.format(cell[:0], unsafe.Add(base, c.off))
		if err != nil {
			return dst, fmt.Errorf("csv: field %s.%s: %w", e.typ.Name(), c.field, err)
		}
		if len(e.cols) == 1 && len(cell) == 0 {
			return append(dst, `""`...), nil
		}
		dst = e.appendCell(dst, string(cell))
	}
	return dst, nil
}

// appendCell appends cell, quoted when encoding/csv's Writer would quote
// it.
func (e *CSVEncoder[T]) appendCell(dst []byte, cell string) []byte {
	if !e.needsQuotes(cell) {
		return append(dst, cell...)
	}
	dst = append(dst, '"')
	dst = append(dst, strings.ReplaceAll(cell, `"`, `""`)...)
	return append(dst, '"')
}

// needsQuotes is encoding/csv's Writer.fieldNeedsQuotes: a cell that
// holds the delimiter, a quote or a line break, that starts with a
// space, or that is \. (which PostgreSQL reads as the end of data).
func (e *CSVEncoder[T]) needsQuotes(cell string) bool {
	if cell == "" {
		return false
	}
	if cell == `\.` || strings.Contains(cell, e.delim) || strings.ContainsAny(cell, "\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(cell)
	return unicode.IsSpace(r)
}

// csvFormatter returns the function that writes the field of type t at p
// as a cell, for the types csvParser reads.
func csvFormatter(t reflect.Type) func(dst []byte, p unsafe.Pointer) ([]byte, error) {
	switch t.Kind() {
	case reflect.String:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) { return append(dst, *(*string)(p)...), nil }
	case reflect.Bool:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) { return strconv.AppendBool(dst, *(*bool)(p)), nil }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if t == durationType {
			return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
				return append(dst, (*(*time.Duration)(p)).String()...), nil
			}
		}
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendInt(dst, reflect.NewAt(t, p).Elem().Int(), 10), nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendUint(dst, reflect.NewAt(t, p).Elem().Uint(), 10), nil
		}
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return appendCSVFloat(dst, reflect.NewAt(t, p).Elem().Float(), bits), nil
		}
	case reflect.Struct: // time.Time or a type defined on it: csvColumns checked
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			tm := *(*time.Time)(p)
			if _, off := tm.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
				return dst, fmt.Errorf("time %s has a zone offset RFC 3339 cannot write (whole minutes under a day)", tm)
			}
			if y := tm.Year(); y < 0 || y > 9999 {
				return dst, fmt.Errorf("time %s has a year outside 0-9999, which RFC 3339 cannot write", tm)
			}
			return tm.AppendFormat(dst, time.RFC3339Nano), nil
		}
	}
	panic("format: csvFormatter of " + t.String() + ", which csvColumns refuses")
}

// appendCSVFloat writes f as encoding/json does, and NaN and the
// infinities as strconv does.
func appendCSVFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.AppendFloat(dst, f, 'g', -1, bits)
	}
	b, err := jsonMarshalFloat(f, bits)
	if err != nil {
		panic("format: encoding/json refused a finite float: " + err.Error())
	}
	return append(dst, b...)
}

func jsonMarshalFloat(f float64, bits int) ([]byte, error) {
	if bits == 32 {
		return json.Marshal(float32(f))
	}
	return json.Marshal(f)
}
