package eventtime

import "unsafe"

// osPage is the smallest page the operating system maps memory in.
const osPage = 4096

// prefault writes the zero value into one element of every page of the
// unused capacity of s, right after s was allocated (or grown) and before
// anything reads that memory.
//
// Memory fresh from the operating system is not mapped until it is
// touched. When the first touch of a page is a read, Linux maps the
// shared zero page read-only, and the first write after it is a
// write-protect fault that must flush the page's old mapping from the TLB
// of every core that runs the process: an interprocessor interrupt, which
// the writing core waits for. At parallelism 2 both cores run the
// process, so every such page cost both of them an interrupt (q8 of
// Nexmark: 7% of its CPU at parallelism 2 in the kernel's
// smp_call_function_many_cond and native_write_msr, from the appends to
// its join's pane and from its key index). Reads come first where the
// code looks a slot up before it fills it (keyIndex) and where the
// garbage collector scans an array of pointers up to its capacity (a
// pane's accumulators). A write as the first touch is an ordinary fault.
func prefault[T any](s []T) {
	size := unsafe.Sizeof(*new(T))
	if size == 0 {
		return
	}
	step := max(1, int(osPage/size))
	t := s[len(s):cap(s)]
	var zero T
	for i := 0; i < len(t); i += step {
		t[i] = zero
	}
}
