// Package bad is the golden case of misused side outputs of a process
// operator: each mistake is reported at the call.
package bad

import "github.com/pipegen/pipegen"

type N struct{ N int }

func Self(w string) string { return w }

func Mixed(w string, n *N, in string, ctx pipegen.Context, emit func(string)) {
	name := "alert"
	ctx.Output("alert", in)  // the side output alert carries string
	ctx.Output("alert", n.N) // and not int
	ctx.Output(name, in)     // not a constant
	var v any = in
	ctx.Output("boxed", v)        // an interface
	ctx.Output("dead-letter", in) // a reserved name
	ctx.Output("a b", in)         // not a name
	send := ctx.Output            // a method value hides its calls
	send("x", in)
	helper(ctx, n)
}

func helper(ctx pipegen.Context, n *N) {
	ctx.Output("alert", *n) // seen through the helper
}

func Plain(w string, n *N, in string, ctx pipegen.Context, emit func(string)) { emit(in) }

func Good(w string, n *N, in string, ctx pipegen.Context, emit func(string)) {
	ctx.Output("alert", in)
}
