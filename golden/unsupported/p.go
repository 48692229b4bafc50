// Package p is the golden case of what this compiler parses but does not
// run yet: each gets a clear diagnostic, never a silent skip.
package p
