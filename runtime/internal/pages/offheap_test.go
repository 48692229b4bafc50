package pages

import (
	"runtime"
	"testing"
	"time"
)

// TestBlock: a Block is whole pages of zeroed memory that can be written,
// seen as an array of any element, counted in Mapped until freed.
func TestBlock(t *testing.T) {
	before := Mapped()
	b := NewBlock(10_000)
	if b == nil {
		t.Skip("no memory outside the heap on this system")
	}
	if b.Len() != 3*Size || cap(b.Bytes()) != 3*Size || len(b.Bytes()) != 0 {
		t.Fatalf("a block of 10000 bytes has %d (capacity %d), want 3 pages, empty", b.Len(), cap(b.Bytes()))
	}
	if got := Mapped() - before; got != 3*Size {
		t.Errorf("Mapped grew by %d, want %d", got, 3*Size)
	}
	a := Array[[3]int32](b)
	if cap(a) != 3*Size/12 || len(a) != 0 {
		t.Fatalf("as [3]int32: capacity %d, length %d; want %d, 0", cap(a), len(a), 3*Size/12)
	}
	a = a[:cap(a)]
	for i := range a {
		if a[i] != ([3]int32{}) {
			t.Fatalf("element %d is %v, want zero", i, a[i])
		}
		a[i] = [3]int32{int32(i), 1, 2}
	}
	if a[1000][0] != 1000 {
		t.Errorf("element 1000 reads %v after the writes", a[1000])
	}
	b.Free()
	b.Free() // a second time: nothing left to unmap
	if got := Mapped() - before; got != 0 {
		t.Errorf("%d bytes still mapped after Free", got)
	}
	if NewBlock(0) != nil || NewBlock(-1) != nil {
		t.Error("a block of no bytes")
	}
}

// TestBlockUnmappedWhenCollected: a Block that nothing refers to is
// unmapped once collected: memory kept by state that a restart dropped
// goes back to the system.
func TestBlockUnmappedWhenCollected(t *testing.T) {
	before := Mapped()
	func() {
		b := NewBlock(1 << 20)
		if b == nil {
			t.Skip("no memory outside the heap on this system")
		}
		b.Bytes()[:1][0] = 1
	}()
	if Mapped()-before != 1<<20 {
		t.Fatalf("Mapped grew by %d, want %d", Mapped()-before, 1<<20)
	}
	for deadline := time.Now().Add(10 * time.Second); Mapped() != before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of a collected block still mapped after 10 s", Mapped()-before)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}
