// Package frames is the golden case of a generator source whose records
// are large (a frame of 3,000 bytes): its chain makes them one at a time,
// where smaller records are made in batches of about 4 KB.
package frames

import "fmt"

// Frame is a camera frame: more than 2 KB, so not batched.
type Frame struct {
	Camera int
	Pixels [3000]byte
}

// Brightness is the summary of a frame that the pipeline prints.
type Brightness struct {
	Camera int
	Sum    int
}

func (b Brightness) String() string { return fmt.Sprintf("camera %d: %d", b.Camera, b.Sum) }

// Next makes 12 frames into f, each pixel a function of the frame's
// number and the pixel's.
func Next(seq uint64, f *Frame) bool {
	if seq >= 12 {
		return false
	}
	f.Camera = int(seq % 3)
	for i := range f.Pixels {
		f.Pixels[i] = byte((int(seq) + i) % 7)
	}
	return true
}

// Measure sums a frame's pixels.
func Measure(f *Frame) Brightness {
	sum := 0
	for _, p := range f.Pixels {
		sum += int(p)
	}
	return Brightness{Camera: f.Camera, Sum: sum}
}
