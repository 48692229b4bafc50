// Package annotated is pipegen's example of pipelines written in Go: the
// //pipegen: directives on the functions of this package describe two
// stream jobs, and `go generate` compiles each into a file of this package
// (pageviews_pipegen.go, busiest_pipegen.go) and a command that runs it
// (cmd/pageviews, cmd/busiest). See docs/annotations.md in pipegen.
//
// pageviews reads the page views that web servers log, as JSON lines,
// drops those of crawlers, normalises their paths, and counts the views of
// every page and the time spent on it: one line per page when the input
// ends. busiest (busiest.go) makes up a stream of views, for demos, and
// prints every user's longest view.
//
// The commands take the usual flags of a pipegen program:
//
//	go run ./cmd/pageviews run --set sources.views.path=testdata/views.jsonl --set sinks.pages.path=out
//	go run ./cmd/busiest run
package annotated

import (
	"fmt"
	"strings"
)

//go:generate go run github.com/pipegen/pipegen/cmd/pipegen generate -cmd

//pipegen:pipeline pageviews parallelism=2 checkpoint.interval=5s
//pipegen:source views pipeline=pageviews connector=file path=views.jsonl format=jsonl type=View on-error=skip
//pipegen:sink pages pipeline=pageviews input=per-page connector=file path=out

// View is one page view, as a web server logs it.
type View struct {
	User   string `json:"user"`
	Path   string `json:"path"`
	Agent  string `json:"agent"`
	Millis int64  `json:"millis"` // time spent on the page
}

func (v View) String() string { return fmt.Sprintf("%s %s %dms", v.User, v.Path, v.Millis) }

// Visit is a view by a person, its path normalised.
type Visit struct {
	Path   string
	Millis int64
}

// PageTotal is the state kept per page.
type PageTotal struct {
	Views  int64
	Millis int64
}

// PageStats is one line of pageviews' output.
type PageStats struct {
	Path      string `json:"path"`
	Views     int64  `json:"views"`
	AvgMillis int64  `json:"avg_millis"`
}

// Human reports whether a view is a person's rather than a crawler's.
//
//pipegen:filter humans pipeline=pageviews input=views
func Human(v View) bool {
	agent := strings.ToLower(v.Agent)
	return !strings.Contains(agent, "bot") && !strings.Contains(agent, "spider")
}

// ToVisit normalises a view's path: no query, no trailing slash, lower
// case.
//
//pipegen:map visits pipeline=pageviews input=humans
func ToVisit(v View) Visit {
	path, _, _ := strings.Cut(v.Path, "?")
	path = strings.ToLower(strings.TrimSuffix(path, "/"))
	if path == "" {
		path = "/"
	}
	return Visit{Path: path, Millis: v.Millis}
}

// ByPath keys a visit by its page.
func ByPath(v Visit) string { return v.Path }

// AddVisit counts a visit into its page's total.
//
//pipegen:aggregate per-page pipeline=pageviews input=visits key=ByPath result=Stats emit=final
func AddVisit(t *PageTotal, v Visit) {
	t.Views++
	t.Millis += v.Millis
}

// Stats makes a page's output line from its total.
func Stats(path string, t *PageTotal) PageStats {
	return PageStats{Path: path, Views: t.Views, AvgMillis: t.Millis / t.Views}
}
