package kafka

import (
	"fmt"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// meta fills the fields of a record type that a `kafka:"..."` tag names
// with the message's metadata: key (a string or []byte), topic (a
// string), partition and offset (integers), timestamp (a time.Time). The
// value decodes into the record first; these fields are set after.
type meta struct {
	fields []metaField
}

type metaField struct {
	index []int
	what  string
	bytes bool // a []byte key
}

var timeType = reflect.TypeFor[time.Time]()

// metaOf returns the metadata fields of T, nil when it has none.
func metaOf[T any]() (*meta, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, nil
	}
	m := &meta{}
	for _, f := range reflect.VisibleFields(t) {
		what, ok := f.Tag.Lookup("kafka")
		if !ok || !f.IsExported() {
			continue
		}
		mf := metaField{index: f.Index, what: what}
		k := f.Type.Kind()
		fits := false
		switch what {
		case "key":
			mf.bytes = k == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8
			fits = k == reflect.String || mf.bytes
		case "topic":
			fits = k == reflect.String
		case "partition", "offset":
			fits = k >= reflect.Int && k <= reflect.Int64
		case "timestamp":
			fits = f.Type == timeType
		default:
			return nil, fmt.Errorf("field %s of %s: unknown tag kafka:%q (key, topic, partition, offset or timestamp)", f.Name, t, what)
		}
		if !fits {
			return nil, fmt.Errorf("field %s of %s: a field tagged kafka:%q cannot be of type %s", f.Name, t, what, f.Type)
		}
		m.fields = append(m.fields, mf)
	}
	if len(m.fields) == 0 {
		return nil, nil
	}
	return m, nil
}

// set fills rec's metadata fields from r.
func (m *meta) set(rec any, r *kgo.Record) {
	v := reflect.ValueOf(rec).Elem()
	for _, f := range m.fields {
		fv := v.FieldByIndex(f.index)
		switch f.what {
		case "key":
			if f.bytes {
				fv.SetBytes(append([]byte(nil), r.Key...))
			} else {
				fv.SetString(string(r.Key))
			}
		case "topic":
			fv.SetString(r.Topic)
		case "partition":
			fv.SetInt(int64(r.Partition))
		case "offset":
			fv.SetInt(r.Offset)
		case "timestamp":
			fv.Set(reflect.ValueOf(r.Timestamp.UTC()))
		}
	}
}
