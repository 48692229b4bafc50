package storage

import "fmt"

// ReadSections calls read with each section of state file f whose key
// group is in [start, end) (a subtask's), in order. It stops at read's
// first error and returns it with the file's name and the key group.
// The file is mapped into memory where it can be (OpenMapped): a section
// is valid only until read returns, and read-only.
func (l *Loaded) ReadSections(f StateFile, start, end int, read func(kg int, section []byte) error) error {
	r, err := l.OpenMapped(f)
	if err != nil {
		return err
	}
	for kg, sec, ok := r.Next(); ok; kg, sec, ok = r.Next() {
		if kg < start || kg >= end {
			continue
		}
		if err := read(kg, sec); err != nil {
			r.Close()
			return fmt.Errorf("%s, key group %d: %w", f.Name, kg, err)
		}
	}
	return r.Close()
}
