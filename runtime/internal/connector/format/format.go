// Package format reads and writes records in the line-oriented formats of
// the connectors: lines, JSON lines and CSV. Decoders hand a source one
// record per line (a csv record over several lines when a quoted field
// holds line breaks); encoders append one record to a sink's buffer.
package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// Format reads the records of a line-oriented file format: lines, jsonl or
// csv. One Format serves every subtask of a source; what a file's records
// depend on (the header of a csv file) lives in the Decoder made for it.
type Format[T any] interface {
	// NewDecoder starts decoding one file.
	NewDecoder() Decoder[T]
}

// Decoder decodes the lines of one file, in order, each given without its
// line ending. A Decoder is used by one goroutine.
type Decoder[T any] interface {
	// NeedsHeader reports whether the file's next non-empty line is its
	// header, for Header, rather than a record.
	NeedsHeader() bool
	// Header reads the header line. Its error fails the job whatever the
	// source's on-error policy: without a header no record of the file can
	// be decoded.
	Header(line []byte) error
	// Decode returns the record of one line. ok is false for a line that
	// holds no record (an empty line of jsonl or csv); an error is a
	// malformed record. line is valid only until Decode returns.
	Decode(line []byte) (rec T, ok bool, err error)
}

// Spanning is a Decoder whose records may go on past a line break: csv,
// whose quoted fields may hold line breaks. A file source joins such a
// record's lines before decoding it.
type Spanning interface {
	// Continues reports whether a record goes on past the line break
	// after line, one of its lines without the line ending; open is what
	// it reported for the record's line before (false for its first).
	Continues(line []byte, open bool) bool
}

// formatError is a malformed record.
type formatError struct {
	format string // JSON or CSV
	err    error
}

func (e *formatError) Error() string {
	return "bad " + e.format + ": " + strings.TrimPrefix(e.err.Error(), "json: ")
}

func (e *formatError) Unwrap() error { return e.err }

// LinesFormat reads every line as a string, empty lines included.
func LinesFormat() Format[string] { return linesFormat{} }

// linesFormat needs no state per file: it is its own decoder.
type linesFormat struct{}

func (linesFormat) NewDecoder() Decoder[string]              { return linesFormat{} }
func (linesFormat) NeedsHeader() bool                        { return false }
func (linesFormat) Header([]byte) error                      { return nil }
func (linesFormat) Decode(line []byte) (string, bool, error) { return string(line), true, nil }

// JSONFormat reads one JSON value per line into T with encoding/json;
// blank lines hold no record. A decode error names the field it is about.
func JSONFormat[T any]() Format[T] {
	return jsonFormat[T]{fields: jsonFields(reflect.TypeFor[T]())}
}

// JSONFormatFast is JSONFormat with a generated decoder: decode fills a
// zero record from a line, as encoding/json would, or returns false for a
// line it does not handle (malformed, or beyond what it covers), which
// then goes through encoding/json. With strict it accepts only a line
// that checkStrict would.
func JSONFormatFast[T any](decode func(line []byte, v *T, strict bool) bool) Format[T] {
	return jsonFormat[T]{fields: jsonFields(reflect.TypeFor[T]()), fast: decode}
}

type jsonFormat[T any] struct {
	fields []jsonField
	strict bool
	fast   func(line []byte, v *T, strict bool) bool
}

func (f jsonFormat[T]) NewDecoder() Decoder[T] { return &jsonDecoder[T]{rec: new(T), f: f} }

// Strict reads only JSON objects with exactly T's fields.
func (f jsonFormat[T]) Strict() Format[T] {
	f.strict = true
	return f
}

type jsonDecoder[T any] struct {
	// rec is decoded into and copied out, so that the record does not need
	// an allocation of its own on every line.
	rec *T
	f   jsonFormat[T]
}

func (*jsonDecoder[T]) NeedsHeader() bool   { return false }
func (*jsonDecoder[T]) Header([]byte) error { return nil }

func (d *jsonDecoder[T]) Decode(line []byte) (T, bool, error) {
	var zero T
	// A line that starts with a byte above the space is not blank. The
	// check is written here, in the body that a generated program
	// compiles as its own instance, because there isBlank stays a call
	// (runtime/inline.go says why): one at every line otherwise.
	if (len(line) == 0 || line[0] <= ' ') && isBlank(line) {
		return zero, false, nil
	}
	if d.f.fast != nil {
		*d.rec = zero
		if d.f.fast(line, d.rec, d.f.strict) {
			return *d.rec, true, nil
		}
	}
	if d.f.strict {
		if err := checkStrict(line, d.f.fields); err != nil {
			return zero, false, &formatError{"JSON", err}
		}
	}
	// A reused record must start empty, or fields missing from this line
	// would keep the previous line's values.
	*d.rec = zero
	if err := json.Unmarshal(line, d.rec); err != nil {
		return zero, false, &formatError{"JSON", fieldError(line, d.f.fields, err)}
	}
	return *d.rec, true, nil
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// CSVFormat reads one record per line into the struct T: fields separated
// by delimiter, quoted as in RFC 4180; a quoted field may hold line
// breaks, and its record then spans lines (Spanning). With header, the
// first non-empty line of each file names the columns, matched
// case-insensitively to the `csv:"name"` tag of an exported field or else
// to its name; a field without a column keeps its zero value. Without
// header, the columns are the exported fields in declaration order. A
// field tagged `csv:"-"` is never read.
//
// Fields may be strings, bools, integers, floats, time.Time (RFC 3339),
// time.Duration (Go syntax such as 1m30s), or types defined on these; an
// empty cell leaves a non-string field at zero. A type defined on
// time.Duration reads as an integer of nanoseconds, since reflection cannot
// tell it from any other int64.
func CSVFormat[T any](delimiter rune, header bool) (Format[T], error) {
	if err := checkDelimiter(delimiter); err != nil {
		return nil, err
	}
	t := reflect.TypeFor[T]()
	cols, err := csvColumns(t)
	if err != nil {
		return nil, err
	}
	f := &csvFormat[T]{delim: utf8.AppendRune(nil, delimiter), header: header, cols: cols, typ: t}
	for i := range cols {
		f.bind = append(f.bind, csvBinding{name: cols[i].field, col: &cols[i], index: i})
	}
	if len(f.delim) == 1 {
		f.stop[f.delim[0]], f.stop['"'] = true, true
	}
	return f, nil
}

// CSVFormatFor is CSVFormat with the header and delimiter options of source
// n; bad options stop the job.
func CSVFormatFor[T any](n *config.NodeConfig) Format[T] {
	return CSVFormatForFast[T](n, nil)
}

// CSVFormatForFast is CSVFormatFor with a generated decoder (see
// CSVFormatFast); nil is none.
func CSVFormatForFast[T any](n *config.NodeConfig, decode CSVDecodeFunc[T]) Format[T] {
	fail := func(err error) { fault.Abortf("sources.%s: %w", n.Name, err) }
	header := true
	if h := n.Option("header"); h != "" {
		var err error
		if header, err = strconv.ParseBool(h); err != nil {
			fail(fmt.Errorf("header wants true or false, got %q", h))
		}
	}
	delim := ','
	if d := n.Option("delimiter"); d != "" {
		r, size := utf8.DecodeRuneInString(d)
		if size != len(d) {
			fail(fmt.Errorf("delimiter wants one character, got %q", d))
		}
		delim = r
	}
	f, err := CSVFormatFast(delim, header, decode)
	if err != nil {
		fail(err)
	}
	return f
}

// CSVDecodeFunc is a generated CSV decoder: it fills the zero record v
// from the cells of one line, cell i into the field of column cols[i]
// (an index into the columns CSVFormat reads: the exported fields not
// tagged `csv:"-"`, in declaration order), as the reflective decoder
// would, or returns false for a cell it does not handle or that is
// malformed. The line then goes through the reflective decoder, which
// returns its record or its error: a generated decoder changes the
// speed, never the result.
type CSVDecodeFunc[T any] func(cells [][]byte, cols []int, v *T) bool

// CSVFormatFast is CSVFormat with a generated decoder for the cells of
// a line; splitting the line, the header, strict mode and every error
// stay the reflective format's. A nil decode is CSVFormat.
func CSVFormatFast[T any](delimiter rune, header bool, decode CSVDecodeFunc[T]) (Format[T], error) {
	f, err := CSVFormat[T](delimiter, header)
	if err != nil || decode == nil {
		return f, err
	}
	c := f.(*csvFormat[T])
	c.fast = decode
	return c, nil
}

type csvFormat[T any] struct {
	delim  []byte
	header bool
	cols   []csvColumn
	// bind is the binding of a file without header.
	bind []csvBinding
	typ  reflect.Type
	// strict wants a column for every field.
	strict bool
	// stop marks the bytes a one-byte delimiter and the quote: where an
	// unquoted cell ends or is malformed.
	stop [256]bool
	// fast is the generated decoder, or nil.
	fast CSVDecodeFunc[T]
}

// Strict reads only files whose header names every field of T (a file
// without header has a column for every field already).
func (f *csvFormat[T]) Strict() Format[T] {
	s := *f
	s.strict = true
	return &s
}

// csvColumn is a field of the record type that a column can fill.
type csvColumn struct {
	name  string // what a header names it by: the tag, else the field name
	field string // the Go field name
	off   uintptr
	typ   reflect.Type
	parse func(p unsafe.Pointer, b []byte) error
}

// csvBinding is column i of a file bound to a field.
type csvBinding struct {
	name  string // the column's name in the header, for messages
	col   *csvColumn
	index int // col's index in the format's cols
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
)

func csvColumns(t reflect.Type) ([]csvColumn, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("csv needs a struct record type, got %s", t)
	}
	var cols []csvColumn
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("csv")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		parse := csvParser(sf.Type)
		if parse == nil {
			return nil, fmt.Errorf("csv cannot read field %s.%s of type %s: use string, bool, a number, time.Time or time.Duration, or tag it `csv:\"-\"`", t.Name(), sf.Name, sf.Type)
		}
		cols = append(cols, csvColumn{name: name, field: sf.Name, off: sf.Offset, typ: sf.Type, parse: parse})
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("csv record type %s has no exported field", t)
	}
	return cols, nil
}

// csvParser returns the function that parses a cell into a field of type t
// at p, or nil when csv cannot read t. The fields are written through
// unsafe pointers of their underlying type, so that a record costs no
// reflection.
func csvParser(t reflect.Type) func(p unsafe.Pointer, b []byte) error {
	bad := func(b []byte) error { return fmt.Errorf("%q is not a valid %s", b, t) }
	switch t.Kind() {
	case reflect.String:
		return func(p unsafe.Pointer, b []byte) error {
			*(*string)(p) = string(b)
			return nil
		}
	case reflect.Bool:
		return func(p unsafe.Pointer, b []byte) error {
			if len(b) == 0 {
				return nil
			}
			v, err := strconv.ParseBool(string(b))
			if err != nil {
				return bad(b)
			}
			*(*bool)(p) = v
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if t == durationType {
			return func(p unsafe.Pointer, b []byte) error {
				if len(b) == 0 {
					return nil
				}
				d, err := time.ParseDuration(string(b))
				if err != nil {
					return fmt.Errorf("%q is not a duration (write it as 1.5s, 10m or 1h30m)", b)
				}
				*(*time.Duration)(p) = d
				return nil
			}
		}
		bits := t.Bits()
		return func(p unsafe.Pointer, b []byte) error {
			if len(b) == 0 {
				return nil
			}
			v, err := strconv.ParseInt(string(b), 10, bits)
			if err != nil {
				return bad(b)
			}
			switch bits {
			case 8:
				*(*int8)(p) = int8(v)
			case 16:
				*(*int16)(p) = int16(v)
			case 32:
				*(*int32)(p) = int32(v)
			default:
				*(*int64)(p) = v
			}
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		bits := t.Bits()
		return func(p unsafe.Pointer, b []byte) error {
			if len(b) == 0 {
				return nil
			}
			v, err := strconv.ParseUint(string(b), 10, bits)
			if err != nil {
				return bad(b)
			}
			switch bits {
			case 8:
				*(*uint8)(p) = uint8(v)
			case 16:
				*(*uint16)(p) = uint16(v)
			case 32:
				*(*uint32)(p) = uint32(v)
			default:
				*(*uint64)(p) = v
			}
			return nil
		}
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(p unsafe.Pointer, b []byte) error {
			if len(b) == 0 {
				return nil
			}
			v, err := strconv.ParseFloat(string(b), bits)
			if err != nil {
				return bad(b)
			}
			if bits == 32 {
				*(*float32)(p) = float32(v)
			} else {
				*(*float64)(p) = v
			}
			return nil
		}
	case reflect.Struct:
		// Convertible struct types have identical layouts: this admits
		// time.Time and the types defined on it.
		if !t.ConvertibleTo(timeType) {
			return nil
		}
		return func(p unsafe.Pointer, b []byte) error {
			if len(b) == 0 {
				return nil
			}
			v, err := time.Parse(time.RFC3339, string(b))
			if err != nil {
				return fmt.Errorf("%q is not an RFC 3339 time such as 2006-01-02T15:04:05Z", b)
			}
			*(*time.Time)(p) = v
			return nil
		}
	}
	return nil
}

func (f *csvFormat[T]) NewDecoder() Decoder[T] {
	d := &csvDecoder[T]{f: f, rec: new(T)}
	if f.header {
		d.needHeader = true
	} else {
		d.setBind(f.bind)
	}
	return d
}

// setBind binds the columns of a file, and the generated decoder's
// column indexes with them.
func (d *csvDecoder[T]) setBind(bind []csvBinding) {
	d.bind = bind
	d.cols = d.cols[:0]
	for _, b := range bind {
		d.cols = append(d.cols, b.index)
	}
}

type csvDecoder[T any] struct {
	f          *csvFormat[T]
	rec        *T
	needHeader bool
	bind       []csvBinding
	// cols is bind as the indexes of its columns, for the generated
	// decoder.
	cols []int
	// fields and scratch hold the cells of the line being decoded; unquoted
	// cells point into the line, quoted ones into scratch.
	fields  [][]byte
	scratch []byte
}

func (d *csvDecoder[T]) NeedsHeader() bool { return d.needHeader }

func (d *csvDecoder[T]) Header(line []byte) error {
	if err := d.split(line); err != nil {
		return fmt.Errorf("csv header: %w", err)
	}
	bind := make([]csvBinding, len(d.fields))
	for i, name := range d.fields {
		index := d.f.column(string(name))
		if index < 0 {
			return fmt.Errorf("csv header: unknown column %q: %s has columns %s", name, d.f.typ.Name(), d.f.columnNames())
		}
		col := &d.f.cols[index]
		for _, b := range bind[:i] {
			if b.col == col {
				return fmt.Errorf("csv header: columns %q and %q both name field %s.%s", b.name, name, d.f.typ.Name(), col.field)
			}
		}
		bind[i] = csvBinding{name: string(name), col: col, index: index}
	}
	if d.f.strict {
		var missing []string
		for i := range d.f.cols {
			if !slices.ContainsFunc(bind, func(b csvBinding) bool { return b.col == &d.f.cols[i] }) {
				missing = append(missing, d.f.cols[i].name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("csv header: no column for %s of %s (strict)", strings.Join(missing, ", "), d.f.typ.Name())
		}
	}
	d.setBind(bind)
	d.needHeader = false
	return nil
}

// column is the index of the column a header names name, or -1.
func (f *csvFormat[T]) column(name string) int {
	for i := range f.cols {
		if strings.EqualFold(f.cols[i].name, name) {
			return i
		}
	}
	return -1
}

func (f *csvFormat[T]) columnNames() string {
	names := make([]string, len(f.cols))
	for i, c := range f.cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func (d *csvDecoder[T]) Decode(line []byte) (T, bool, error) {
	var zero T
	if len(line) == 0 {
		return zero, false, nil
	}
	if err := d.split(line); err != nil {
		return zero, false, &formatError{"CSV", err}
	}
	if len(d.fields) != len(d.bind) {
		return zero, false, &formatError{"CSV", fmt.Errorf("%d fields, want %d", len(d.fields), len(d.bind))}
	}
	*d.rec = zero
	if d.f.fast != nil {
		if d.f.fast(d.fields, d.cols, d.rec) {
			return *d.rec, true, nil
		}
		*d.rec = zero
	}
	base := unsafe.Pointer(d.rec)
	for i, b := range d.bind {
		if err := b.col.parse(unsafe.Add(base, b.col.off), d.fields[i]); err != nil {
			return zero, false, &formatError{"CSV", fmt.Errorf("column %s: %w", b.name, err)}
		}
	}
	return *d.rec, true, nil
}

// Continues reports whether a csv record goes on past the line break after
// line: whether line ends inside a quoted field, as encoding/csv reads
// it (a field is quoted when its first character is a quote; a bare quote
// elsewhere does not open one). open says that the record's line before
// did, so that line starts inside a quoted field.
func (d *csvDecoder[T]) Continues(line []byte, open bool) bool {
	if !open && bytes.IndexByte(line, '"') < 0 {
		return false // most lines: one fast look, not a pass per field
	}
	delim := d.f.delim
	quoted, start := open, !open
	for i := 0; i < len(line); {
		switch {
		case quoted:
			q := bytes.IndexByte(line[i:], '"')
			if q < 0 {
				return true
			}
			i += q + 1
			if i < len(line) && line[i] == '"' {
				i++ // a doubled quote, inside the field
				continue
			}
			quoted = false
		case start && line[i] == '"':
			quoted, start = true, false
			i++
		default:
			end := bytes.Index(line[i:], delim)
			if end < 0 {
				return false
			}
			i += end + len(delim)
			start = true
		}
	}
	return quoted
}

var errBareQuote = errors.New(`bare " in unquoted field (quote the field and double the quote)`)

// split cuts line into d.fields.
func (d *csvDecoder[T]) split(line []byte) error {
	delim := d.f.delim
	d.fields = d.fields[:0]
	// Unquoting never lengthens a cell: with this capacity scratch is never
	// reallocated, and the cells already cut stay valid.
	if cap(d.scratch) < len(line) {
		d.scratch = make([]byte, 0, len(line))
	}
	d.scratch = d.scratch[:0]
	i := 0
	for {
		if i < len(line) && line[i] == '"' {
			i++
			start := len(d.scratch)
			for {
				q := bytes.IndexByte(line[i:], '"')
				if q < 0 {
					return errors.New("quoted field not closed before the end of the record")
				}
				d.scratch = append(d.scratch, line[i:i+q]...)
				i += q + 1
				if i < len(line) && line[i] == '"' {
					d.scratch = append(d.scratch, '"')
					i++
					continue
				}
				break
			}
			d.fields = append(d.fields, d.scratch[start:len(d.scratch):len(d.scratch)])
			if i == len(line) {
				return nil
			}
			if !bytes.HasPrefix(line[i:], delim) {
				return fmt.Errorf("%q after the closing quote of field %d: want the delimiter %q", line[i], len(d.fields), delim)
			}
			i += len(delim)
			continue
		}
		var cell []byte
		end := -1
		if len(delim) == 1 {
			// Cells are short: one pass over the cell, for the delimiter
			// and for a bare quote, costs less than two calls of
			// IndexByte.
			stop := &d.f.stop
			rest := line[i:]
			k := 0
			for k < len(rest) && !stop[rest[k]] {
				k++
			}
			if k < len(rest) {
				if rest[k] == '"' {
					return errBareQuote
				}
				end = k
			}
		} else {
			end = bytes.Index(line[i:], delim)
		}
		if end < 0 {
			cell = line[i:]
		} else {
			cell = line[i : i+end]
		}
		if len(delim) != 1 && bytes.IndexByte(cell, '"') >= 0 {
			return errBareQuote
		}
		d.fields = append(d.fields, cell)
		if end < 0 {
			return nil
		}
		i += end + len(delim)
	}
}

// Encoder appends the encoding of one record to dst, without a line
// ending.
type Encoder[T any] func(dst []byte, v T) ([]byte, error)

// EncodeString writes a string as it is.
func EncodeString(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil }

// EncodeStringer writes what v's String method returns.
func EncodeStringer[T fmt.Stringer](dst []byte, v T) ([]byte, error) {
	return append(dst, v.String()...), nil
}

// jsonBuf is an encoder that keeps its buffer from one record to the next.
type jsonBuf struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonBufs = sync.Pool{New: func() any {
	b := new(jsonBuf)
	b.enc = json.NewEncoder(&b.buf)
	// The output is data, not HTML: json.Marshal's \u003c for < would
	// only make it harder to read.
	b.enc.SetEscapeHTML(false)
	return b
}}

// maxPooledJSON bounds the buffer a pooled encoder keeps after one huge
// record.
const maxPooledJSON = 64 << 10

// EncodeJSON writes v as one line of JSON (encoding/json, without HTML
// escaping).
func EncodeJSON[T any](dst []byte, v T) ([]byte, error) {
	b := jsonBufs.Get().(*jsonBuf)
	b.buf.Reset()
	err := b.enc.Encode(v)
	if err == nil {
		out := b.buf.Bytes()
		dst = append(dst, out[:len(out)-1]...) // without Encode's newline
	}
	if b.buf.Cap() <= maxPooledJSON {
		jsonBufs.Put(b)
	}
	return dst, err
}
