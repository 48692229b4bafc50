// Package pipegen holds the types that user functions of a pipeline receive
// from the runtime, such as Window.
//
// pipegen itself is a compiler: `pipegen build pipeline.yaml` turns a
// pipeline into one Go program. See the README and docs/ for the manual;
// the compiler's command line is documented in cmd/pipegen.
package pipegen

import "time"

// Window is the window a windowed aggregate's result belongs to: the
// records with event times in [Start, End).
type Window struct {
	Start time.Time
	End   time.Time
}
