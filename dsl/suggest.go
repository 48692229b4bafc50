package dsl

import "fmt"

// suggest returns `, did you mean "x"?` when one of candidates is a near
// miss of word (a typo), and "" otherwise.
func suggest(word string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(word, c)
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	// A third of the word may be wrong, at least one letter.
	if best == "" || bestDist == 0 || bestDist > max(1, len(word)/3) {
		return ""
	}
	return fmt.Sprintf(", did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
