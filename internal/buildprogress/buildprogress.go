// Package buildprogress shows what a long build of a pipeline is doing,
// for the commands that build one (pipegen build, verify).
//
// The progress of a build is shown only once it has lasted a while, and
// only when it does more than usual: a build with a warm cache compiles
// the program's own package and links it, a few seconds, and says
// nothing. A first build compiles the runtime and its dependencies (45 s
// on two cores), and a profile-guided one every package: the user is
// told what the go command is doing rather than left before a silent
// terminal.
package buildprogress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pipegen/pipegen/compile"
)

const (
	// progressAfter is how long a build goes on before its progress is
	// shown.
	progressAfter = 2 * time.Second
	// progressRedraw is how often a terminal's progress line is drawn
	// again, in place.
	progressRedraw = 250 * time.Millisecond
	// progressEvery is how often a new progress line is written when the
	// standard error is not a terminal (a CI log): at most a line a
	// period, not one a package.
	progressEvery = 10 * time.Second
)

// Progress shows on w (the standard error) what a long build is doing:
// on a terminal one line, redrawn in place and erased at the end;
// elsewhere a line every progressEvery. Its Step method is the build's
// compile.BuildOptions.Progress.
type Progress struct {
	w        io.Writer
	label    string // the pipeline file
	terminal bool
	after    time.Duration // progressAfter
	every    time.Duration // progressRedraw on a terminal, else progressEvery
	start    time.Time
	stop     chan struct{}
	done     chan struct{}

	mu         sync.Mutex
	deps       int    // packages the go command began to compile, but the program's own
	program    bool   // it began to compile the program's own package
	downloaded int    // modules it began to download
	loaded     bool   // the pipeline's Go packages are loaded
	current    string // the latest step, as shown
	shown      bool   // a line was written
}

// Start starts showing the progress of the build of the pipeline
// file on w, which first loads the Go packages the pipeline names (with
// a cold cache, the go command compiles what they import to type-check
// them); End stops it.
func Start(w io.Writer, file string) *Progress {
	terminal, every := isTerminal(w), progressEvery
	if terminal {
		every = progressRedraw
	}
	return start(w, file, terminal, progressAfter, every)
}

func start(w io.Writer, file string, terminal bool, after, every time.Duration) *Progress {
	p := &Progress{w: w, label: file, terminal: terminal, after: after, every: every, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{}), current: "loading the pipeline's Go packages"}
	go p.run()
	return p
}

// isTerminal reports whether w is a character device, such as a
// terminal: its line can be redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Building says that the pipeline's packages are loaded, and the go
// command starts.
func (p *Progress) Building() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loaded, p.current = true, "starting the go command"
}

// Step counts a step the go command began, for the next line; it is the
// build's compile.BuildOptions.Progress.
func (p *Progress) Step(s compile.BuildStep) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case s.Download:
		p.downloaded++
		p.current = "downloading " + s.Path
	case s.Program:
		p.program = true
		p.current = "compiling and linking the program"
	default:
		p.deps++
		p.current = "compiling " + s.Path
	}
}

func (p *Progress) run() {
	defer close(p.done)
	select {
	case <-time.After(p.after):
	case <-p.stop:
		return
	}
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	for {
		p.show()
		select {
		case <-tick.C:
		case <-p.stop:
			return
		}
	}
}

// line says what the build has done so far.
func (p *Progress) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := fmt.Sprintf("building %s: %s", p.label, time.Since(p.start).Round(time.Second))
	if p.downloaded > 0 {
		s += ", " + counted(p.downloaded, "module", "modules") + " downloaded"
	}
	if p.compiled() > 0 {
		s += ", " + counted(p.compiled(), "package", "packages") + " compiled"
	}
	return s + ", " + p.current
}

// compiled is how many packages the go command began to compile; the
// caller holds the lock.
func (p *Progress) compiled() int {
	if p.program {
		return p.deps + 1
	}
	return p.deps
}

func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// progressWidth bounds a terminal's progress line, so that a long import
// path does not wrap it onto a second line that the next redraw would
// not erase.
const progressWidth = 100

// worthShowing reports whether the build does more than usual: a build
// that compiles only the program's own package and links it takes a few
// seconds on any cache (8 s for a large pipeline on two cores), and is
// not worth a line.
func (p *Progress) worthShowing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.loaded || p.deps > 0 || p.downloaded > 0
}

func (p *Progress) show() {
	if !p.worthShowing() {
		return
	}
	line := p.line()
	if p.terminal {
		if len(line) > progressWidth {
			cut := progressWidth - 3
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut] + "..."
		}
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.mu.Lock()
	p.shown = true
	p.mu.Unlock()
}

// End stops showing the progress. When a line was shown, it erases the
// terminal's and says what the build compiled and how long it took; the
// go command keeps what it compiled, so that the next build compiles
// only the program's own package.
func (p *Progress) End(err error) {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shown {
		return
	}
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	if err != nil || p.deps == 0 {
		return
	}
	fmt.Fprintf(p.w, "building %s: %s compiled in %s; the go command keeps them in its cache for the next build\n",
		p.label, counted(p.compiled(), "package", "packages"), time.Since(p.start).Round(100*time.Millisecond))
}
