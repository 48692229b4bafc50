package textcodec

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// CSVWriter appends the cells of CSV lines for generated CSV encoders,
// as the runtime's reflective encoder writes them: a cell quoted as
// encoding/csv's Writer quotes it, numbers with strconv (floats as
// encoding/json writes them, NaN and the infinities as strconv does),
// times in RFC 3339 with nanoseconds, durations in Go syntax. It holds
// only the delimiter and what follows from it: one CSVWriter serves
// every subtask of a sink.
type CSVWriter struct {
	delim []byte
	// stop marks the bytes that make a cell need quotes when the
	// delimiter is one byte: the delimiter, the quote, \r and \n.
	stop [256]bool
	// risky is set when the delimiter can appear in the text of a
	// number, bool, time or duration (a digit, a letter, + - . : or µ),
	// whose cells then need the check strings get.
	risky bool
}

// NewCSVWriter makes the writer of delimiter, which the caller has
// checked: not a quote or line break, a valid character.
func NewCSVWriter(delimiter rune) *CSVWriter {
	w := &CSVWriter{delim: utf8.AppendRune(nil, delimiter)}
	if len(w.delim) == 1 {
		w.stop[w.delim[0]] = true
	}
	w.stop['"'], w.stop['\r'], w.stop['\n'] = true, true, true
	w.risky = delimiter >= utf8.RuneSelf || unicode.IsLetter(delimiter) || unicode.IsDigit(delimiter) || strings.ContainsRune("+-.:", delimiter)
	return w
}

// Delim appends the delimiter between two cells.
func (w *CSVWriter) Delim(b []byte) []byte { return append(b, w.delim...) }

// String appends s as a cell.
func (w *CSVWriter) String(b []byte, s string) []byte {
	if !w.needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// SoleString appends s as the only cell of a line: "" when s is empty,
// since an empty line holds no record.
func (w *CSVWriter) SoleString(b []byte, s string) []byte {
	if s == "" {
		return append(b, '"', '"')
	}
	return w.String(b, s)
}

// needsQuotes is encoding/csv's Writer.fieldNeedsQuotes.
func (w *CSVWriter) needsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if len(w.delim) == 1 {
		for i := 0; i < len(s); i++ {
			if w.stop[s[i]] {
				return true
			}
		}
	} else if strings.Contains(s, string(w.delim)) || strings.ContainsAny(s, "\"\r\n") {
		return true
	}
	if s == `\.` {
		return true
	}
	if c := s[0]; c < utf8.RuneSelf {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// quoteFrom quotes the cell b[start:], which holds no quote or line
// break, when it holds the delimiter.
func (w *CSVWriter) quoteFrom(b []byte, start int) []byte {
	if !w.risky || !bytes.Contains(b[start:], w.delim) {
		return b
	}
	b = append(b, 0, 0)
	copy(b[start+1:], b[start:len(b)-2])
	b[start] = '"'
	b[len(b)-1] = '"'
	return b
}

// Bool appends v as a cell.
func (w *CSVWriter) Bool(b []byte, v bool) []byte {
	start := len(b)
	return w.quoteFrom(strconv.AppendBool(b, v), start)
}

// Int appends v as a cell.
func (w *CSVWriter) Int(b []byte, v int64) []byte {
	start := len(b)
	return w.quoteFrom(AppendInt(b, v), start)
}

// Uint appends v as a cell.
func (w *CSVWriter) Uint(b []byte, v uint64) []byte {
	start := len(b)
	return w.quoteFrom(AppendUint(b, v), start)
}

// Float appends v, a float of bits 32 or 64, as a cell.
func (w *CSVWriter) Float(b []byte, v float64, bits int) []byte {
	start := len(b)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		b = strconv.AppendFloat(b, v, 'g', -1, bits)
	} else {
		b, _ = AppendFloat(b, v, bits)
	}
	return w.quoteFrom(b, start)
}

// Time appends t as a cell; ok is false for a time RFC 3339 cannot
// write so that it reads back the same (a year outside 0-9999, a zone
// offset that is not whole minutes under a day).
func (w *CSVWriter) Time(b []byte, t time.Time) (_ []byte, ok bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return b, false
	}
	start := len(b)
	return w.quoteFrom(t.AppendFormat(b, time.RFC3339Nano), start), true
}

// Duration appends d as a cell, as d.String() writes it.
func (w *CSVWriter) Duration(b []byte, d time.Duration) []byte {
	start := len(b)
	return w.quoteFrom(append(b, d.String()...), start)
}
