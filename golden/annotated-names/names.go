// Package names is the golden case of a package that declares names the
// code generated into it would otherwise take: the name of its settings,
// of its chain, and the name it imports pipegen's state package as. The
// generated file takes others (pipegenNamesConfig2, state2) and runs.
package names

import "strings"

//pipegen:pipeline names
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

// First keys a line by its first letter, in lower case.
func First(s string) string { return strings.ToLower(s[:min(1, len(s))]) }

// pipegenNamesConfig is the name the generated settings would take.
var pipegenNamesConfig = "mine"

// pipegenNamesLongestChain is the name of the chain that runs longest.
type pipegenNamesLongestChain struct{}

// state is the name the generated file would import pipegen's state
// package as.
const state = "mine"

// Names lists them, so that they are used.
func Names() []any { return []any{pipegenNamesConfig, pipegenNamesLongestChain{}, state} }
