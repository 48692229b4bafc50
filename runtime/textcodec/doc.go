// Package textcodec is what generated JSON-lines decoders and encoders
// call: a Scanner that reads one JSON value strictly, and appenders that
// write values as encoding/json does (without HTML escaping); and what
// generated CSV decoders call: parsers of a cell in place (csv.go).
//
// Generated code handles a record type field by field, with no
// reflection. It covers what encoding/json does for the types it
// supports, and gives up (a false ok, or Scanner.Failed) on anything else:
// malformed input, an escape or a number it does not handle, a value
// encoding/json would refuse. The caller then decodes or encodes that
// record with encoding/json itself, which returns its own result or
// error. So a generated codec may be slower than encoding/json on a
// record, never different.
package textcodec
