package annotated

import "fmt"

//pipegen:pipeline busiest parallelism=2
//pipegen:sink print pipeline=busiest input=longest connector=stdout

// DemoViews is the number of views DemoView makes.
const DemoViews = 1000

// DemoView makes up view seq: five users, ten pages, and times on page
// that differ for every view.
//
//pipegen:source demo pipeline=busiest connector=generator
func DemoView(seq uint64) (View, bool) {
	if seq >= DemoViews {
		return View{}, false
	}
	return View{
		User:   fmt.Sprintf("user%d", seq%5),
		Path:   fmt.Sprintf("/page/%d", seq%10),
		Agent:  "demo",
		Millis: int64(seq*7919%10007) + 1,
	}, true
}

// ByUser keys a view by its user.
func ByUser(v View) string { return v.User }

// Longer keeps the longer of two views.
//
//pipegen:reduce longest pipeline=busiest input=demo key=ByUser emit=final
func Longer(a, b View) View {
	if b.Millis > a.Millis {
		return b
	}
	return a
}
