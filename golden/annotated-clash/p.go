// Package p is the golden case of a package whose own names meet names
// that the code generated into it cannot change: its entry point, and a
// predeclared name it uses. (Its other names give way: see
// annotated-names.)
package p

//pipegen:pipeline clash
//pipegen:source lines connector=file path=in.txt
//pipegen:sink out input=longest connector=stdout

// Longest keeps the longer line per first letter.
//
//pipegen:reduce longest input=lines key=First emit=final
func Longest(a, b string) string {
	if len(b) > len(a) {
		return b
	}
	return a
}

// First keys a line by its first byte.
func First(s string) string { return s[:min(1, len(s))] }

// RunClash is the user's own: the generated entry point takes its name.
func RunClash() {}

// recover changes what the generated code calls.
func recover() any { return nil }
