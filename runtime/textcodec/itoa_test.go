package textcodec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// sameAsStrconv fails t when AppendInt or AppendUint writes other bytes
// than strconv for i (and for i as a uint64), after a prefix that must
// stay.
func sameAsStrconv(t *testing.T, i int64) {
	t.Helper()
	if got, want := string(AppendInt([]byte("x:"), i)), strconv.AppendInt([]byte("x:"), i, 10); got != string(want) {
		t.Fatalf("AppendInt(%d) = %q, want %q", i, got, want)
	}
	u := uint64(i)
	if got, want := string(AppendUint(nil, u)), strconv.FormatUint(u, 10); got != want {
		t.Fatalf("AppendUint(%d) = %q, want %q", u, got, want)
	}
}

// TestAppendInt compares AppendInt and AppendUint with strconv at the
// edges of every length (each power of ten and its neighbours, where the
// number of digits and the chunks of eight change), at the ends of
// int64 and uint64, and on random numbers of every bit length.
func TestAppendInt(t *testing.T) {
	for _, i := range []int64{0, 1, 9, 10, 11, 99, 100, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, -1} {
		sameAsStrconv(t, i)
	}
	for p, n := int64(1), 0; n < 19; p, n = p*10, n+1 {
		for _, d := range []int64{-2, -1, 0, 1, 2} {
			sameAsStrconv(t, p+d)
			sameAsStrconv(t, -(p + d))
		}
	}
	for _, u := range []uint64{math.MaxUint64, math.MaxUint64 - 1, 1e19 - 1, 1e19, 1e19 + 1} {
		sameAsStrconv(t, int64(u)) // AppendUint of u itself, and AppendInt of a negative
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		sameAsStrconv(t, int64(r.Uint64()>>r.UintN(64)))
	}
}

// TestAppendIntGrows appends to slices with no room and with room to
// spare, so that both sides of room are taken.
func TestAppendIntGrows(t *testing.T) {
	for _, c := range []int{0, 1, 5, 8, 20, 40} {
		for _, i := range []int64{7, 12345, 1436918400000, math.MinInt64} {
			b := make([]byte, 2, 2+c)
			b[0], b[1] = 'a', 'b'
			got := AppendInt(b, i)
			if want := "ab" + strconv.FormatInt(i, 10); string(got) != want {
				t.Fatalf("AppendInt(cap %d, %d) = %q, want %q", 2+c, i, got, want)
			}
		}
	}
}

func FuzzAppendInt(f *testing.F) {
	for _, i := range []int64{0, 9, 10, 99999999, 100000000, 1436918400000, math.MaxInt64, math.MinInt64} {
		f.Add(i)
	}
	f.Fuzz(sameAsStrconv)
}

// nexmarkNumbers are numbers as Nexmark's bids hold them: auction and
// bidder ids of 4 to 7 digits, prices of 10^(6u) dollars in cents, and
// millisecond timestamps of 13 digits.
var nexmarkNumbers = func() []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]int64, 1024)
	for i := range v {
		switch i % 4 {
		case 0, 1:
			v[i] = 1000 + r.Int64N(1_000_000)
		case 2:
			v[i] = int64(math.Pow(10, 6*r.Float64()) * 100)
		case 3:
			v[i] = 1436918400000 + r.Int64N(100_000_000)
		}
	}
	return v
}()

var appended []byte

// BenchmarkAppendInt writes nexmarkNumbers with strconv and with
// AppendInt, each called directly as generated code calls it; ns/number
// is the time per number.
func BenchmarkAppendInt(b *testing.B) {
	buf := make([]byte, 0, 32<<10)
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for _, i := range nexmarkNumbers {
				buf = strconv.AppendInt(buf, i, 10)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nexmarkNumbers)), "ns/number")
	})
	b.Run("textcodec", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for _, i := range nexmarkNumbers {
				buf = AppendInt(buf, i)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nexmarkNumbers)), "ns/number")
	})
	appended = buf
}

// TestScanIntRoundTrip reads back what AppendInt writes, before a comma
// (as in a JSON object) and at the end of the input, for numbers of
// every length.
func TestScanIntRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var s Scanner
	for range 200_000 {
		want := int64(r.Uint64() >> r.UintN(64))
		for _, tail := range []string{"", `,"x":1}`} {
			s.Reset(append(AppendInt(nil, want), tail...))
			if got := s.Int(64); s.Failed() || got != want {
				t.Fatalf("Int(%q) = %d (failed %v), want %d", s.data, got, s.Failed(), want)
			}
		}
	}
}
