// Package p is the golden case of malformed //pipegen: directives: every
// problem is reported at once, at the directive's key or value.
package p

//pipegen:pipeline one paralelism=2 checkpoint.intervl=1s max-parallelism=0 package=.
//pipegen:pipeline two state.backend=memory state.backend=pebble
//pipegen:pipeline one
//pipegen:source lines pipeline=one connector=file pth=in.txt path="unterminated
//pipegen:source nums pipeline=one connector=generator
//pipegen:sink out pipeline=one input=lines,words connector=stdout format=lines
//pipegen:sink dangling input=lines connector=stdout
//pipegen:sink odd pipeline=three input=lines connector=smtp
//pipegen:mapp m pipeline=one input=lines
// pipegen:map spaced input=lines
//pipegen:union all pipeline=one inputs=lines,,words stray
//pipegen:filter nofunc pipeline=one input=lines
//pipegen:
//pipegen:sink name=named pipeline=one input=lines connector=stdout

// Upper is a map function with directives of every kind of mistake.
//
//pipegen:map upper pipeline=one input=lines key= emit=final emit=update window.tumbling=10s windw.size=1 result=X
//pipegen:union merged pipeline=one inputs=lines,upper
//pipegen:source gen pipeline=one connector=generator generate=Upper
func Upper(s string) string { return s }

type T struct{}

// Method is not a package-level function.
//
//pipegen:filter method pipeline=one input=lines
func (T) Method(s string) bool { return true }
