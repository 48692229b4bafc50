package eventtime

import "math"

// seqList holds the creation numbers of a pane's windows, in the pane's
// order, in 4 bytes each where 8 would do the same.
//
// A window of integer keys and counts takes 32 bytes of a pane's arrays
// besides the index, 8 of them its creation number; Nexmark q5 holds 1.5
// million such windows after 5M events, and its time went to page
// faults of the pages those arrays take as they grow. The numbers of a
// pane's windows are close together: a live pane's are given in
// ascending order, each the state's next number, so they differ from the
// first one by less than the number of windows created while the pane is
// open. They are kept as offsets from the first (base), and in full
// (wide) once one is not: a window of a restored pane created before
// the first one restored, or more than 2^32 windows created while the
// pane is open.
type seqList struct {
	base uint64
	off  []uint32 // seq - base, while every seq is base or after, by less than 2^32
	wide []uint64 // every seq, once one did not fit in off (off is then nil)
}

// at returns the creation number of window i.
func (l *seqList) at(i int) uint64 {
	if l.wide != nil {
		return l.wide[i]
	}
	return l.base + uint64(l.off[i])
}

// add appends seq, the number of the pane's next window.
func (l *seqList) add(seq uint64) {
	if l.wide != nil {
		l.wide = append(l.wide, seq)
		return
	}
	if len(l.off) == 0 {
		l.base = seq
	}
	if d := seq - l.base; seq >= l.base && d <= math.MaxUint32 {
		l.off = append(l.off, uint32(d))
		return
	}
	l.wide = make([]uint64, len(l.off), 2*len(l.off)+1)
	for i, d := range l.off {
		l.wide[i] = l.base + uint64(d)
	}
	l.off = nil
	l.wide = append(l.wide, seq)
}

// double makes room for as many numbers again (pane.double).
func (l *seqList) double() {
	if l.wide != nil {
		l.wide = doubled(l.wide)
		return
	}
	l.off = doubled(l.off)
}

// newSeqList returns the list of the numbers seqs, which are ascending
// (a sorted pane's): narrow when they span less than 2^32.
func newSeqList(seqs []uint64) seqList {
	if len(seqs) == 0 {
		return seqList{}
	}
	if seqs[len(seqs)-1]-seqs[0] > math.MaxUint32 {
		return seqList{wide: seqs}
	}
	l := seqList{base: seqs[0], off: make([]uint32, len(seqs))}
	for i, s := range seqs {
		l.off[i] = uint32(s - l.base)
	}
	return l
}
