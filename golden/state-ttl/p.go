// Package p is the golden case of state TTL.
package p

// Next generates the numbers 0 to 4999.
func Next(seq uint64) (int64, bool) { return int64(seq), seq < 5000 }

// Mod7 keys a number by its remainder of 7.
func Mod7(n int64) int64 { return n % 7 }

// Mod5 keys a number by its remainder of 5.
func Mod5(n int64) int64 { return n % 5 }

// Max keeps the larger number.
func Max(a, b int64) int64 { return max(a, b) }

// Sum is the state of a remainder.
type Sum struct {
	Count int64 `json:"count"`
	Total int64 `json:"total"`
}

// Add adds a number.
func Add(s *Sum, n int64) {
	s.Count++
	s.Total += n
}
