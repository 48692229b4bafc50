package eventtime

import "github.com/pipegen/pipegen/runtime/codec"

// ReadCountSection reads one key group's section of count windows
// (CountWindows.Snapshot's form), for the pebble backend: entry gets a
// reader of each key's entry, the key and then its window.
func ReadCountSection(section []byte, entry func(r *codec.Reader) error) error {
	r := codec.NewReader(section)
	if _, ok := readSectionHeader(r); !ok {
		return r.Err()
	}
	for r.More() {
		if err := entry(r.Nested()); err != nil {
			return err
		}
	}
	return r.Err()
}
