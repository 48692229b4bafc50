// Package reorder is a fixture of compile's tests: a pipeline that
// compiles with a warning, as a pipeline file and as directives. The map
// at parallelism 4 behind a source at 1 spreads every customer's orders
// over its subtasks before the running totals.
package reorder

//pipegen:pipeline reorder
//pipegen:sink out input=running connector=stdout

type Order struct {
	Customer string
	Cents    int64
}

//pipegen:source orders connector=generator parallelism=1
func Next(seq uint64) (Order, bool) {
	return Order{Customer: string(rune('a' + seq%3)), Cents: int64(seq)}, seq < 9
}

//pipegen:map priced input=orders parallelism=4
func Price(o Order) Order { return o }

//pipegen:reduce running input=priced key=ByCustomer
func Add(acc, in Order) Order { return Order{Customer: acc.Customer, Cents: acc.Cents + in.Cents} }

func ByCustomer(o Order) string { return o.Customer }
