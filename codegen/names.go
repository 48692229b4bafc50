package codegen

import (
	"strconv"
	"strings"
)

// Names in generated code.
//
// Every name the generated code makes up comes from a namer, one per
// scope: the file's package-level declarations and its imports, the
// fields and methods of each chain type, the local variables of build,
// and the nodes' identifiers. A namer gives the name wanted when it is
// free and otherwise the name with the first free number added
// (countsChain2), the way google/wire's disambiguate names what it
// generates; it gives a thing the same name every time it is asked.
//
// The package-level namer is the only difference between the two modes.
// For a main package it gives the names as wanted: config, countsChain,
// hashKeyCounts. In the user's package it puts the pipeline's Prefix in
// front (pipegenWordcountConfig, pipegenWordcountCountsChain) and treats
// every name the user's package declares as taken, so that the file
// declares nothing the package has; its imports are named the same way
// (state2 where the package declares state).
type namer struct {
	// prefix starts every name given, in the user's package.
	prefix string
	// declared reports the names declared outside the generated file that
	// it must not redeclare or hide: for the package-level namer the
	// predeclared names and, in package mode, the user's package scope
	// (nil: none).
	declared func(string) bool
	// outer is the enclosing scope, whose names this one must not hide.
	outer *namer
	given map[string]bool
	names map[nameKey]string
}

// A nameKey is what a name is for: the pattern it is made by ("%sChain",
// "encode%s") and what the pattern is applied to (a node's name, a type).
type nameKey struct {
	pattern string
	of      string
}

func newNamer(prefix string, declared func(string) bool, outer *namer) *namer {
	return &namer{prefix: prefix, declared: declared, outer: outer, given: map[string]bool{}, names: map[nameKey]string{}}
}

// name returns the name of key: want, with the prefix, or when that is
// taken the same with a number.
func (nm *namer) name(key nameKey, want string) string {
	if nm.prefix != "" {
		want = nm.prefix + upperFirst(want)
	}
	return nm.pick(key, want)
}

// pick returns the name of key: want, or when that is taken want with a
// number.
func (nm *namer) pick(key nameKey, want string) string {
	if name, ok := nm.names[key]; ok {
		return name
	}
	name := want
	sep := ""
	if n := len(want); n > 0 && '0' <= want[n-1] && want[n-1] <= '9' {
		sep = "_" // step1 and a second step1: step1_2, not step12
	}
	for i := 2; nm.taken(name); i++ {
		name = want + sep + strconv.Itoa(i)
	}
	nm.given[name] = true
	nm.names[key] = name
	return name
}

// reserve takes name as it is, for a name that must not change (the
// entry point of package mode); the caller checks that it is free.
func (nm *namer) reserve(name string) { nm.given[name] = true }

// taken reports whether name is in use in this scope or an enclosing one.
func (nm *namer) taken(name string) bool {
	return nm.given[name] || nm.declared != nil && nm.declared(name) || nm.outer != nil && nm.outer.taken(name)
}

// importName names the import of package path, whose name is pkgName: as
// the package names itself when that is free in the file. It takes no
// prefix.
func (nm *namer) importName(path, pkgName string) string {
	return nm.pick(nameKey{pattern: "import", of: path}, pkgName)
}

// derive applies pattern to node identifiers, one per %s: at the start of
// the name as it is ("%sChain": countsChain), elsewhere capitalized
// ("hashKey%s": hashKeyCounts; "%sTo%s": wordsToCounts).
func derive(pattern string, ids ...string) string {
	for i, id := range ids {
		if i > 0 || !strings.HasPrefix(pattern, "%s") {
			id = upperFirst(id)
		}
		pattern = strings.Replace(pattern, "%s", id, 1)
	}
	return pattern
}
