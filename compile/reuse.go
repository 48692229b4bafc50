package compile

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
)

// reused keeps, once ReuseBuilds has been called, the program built for
// each version of the generated files in this process.
//
// The go command links a program again whenever its output is a file it
// has not written before, even when nothing changed: a test that builds
// a pipeline into its own temporary folder links it anew, and the link
// was a quarter of make test's CPU (examples/nexmark/crash built 15
// programs, 7 of them distinct). A later Build of the same files hard
// links the first one's binary instead, which stays valid when the
// first test's folder is removed.
var reused struct {
	sync.Mutex
	on    bool
	progs map[[sha256.Size]byte]*reusedProgram
}

// reusedProgram is a version's binary: done is closed when the first
// Build of it has ended, and path (under reused's lock) is then the
// binary to link from, "" while there is none.
type reusedProgram struct {
	done      chan struct{}
	path      string
	sourceDir string
}

// ReuseBuilds makes every later Build in this process of the same
// generated files, from the same module, hard link the program the first
// one built instead of building it again. Only for programs (test
// binaries) during whose run the user's packages, what they import and
// the go command's settings do not change: the go command is not asked
// again whether the binary is up to date.
func ReuseBuilds() {
	reused.Lock()
	defer reused.Unlock()
	if !reused.on {
		reused.on = true
		reused.progs = map[[sha256.Size]byte]*reusedProgram{}
	}
}

// reuseKey names a build of r: its module, its generated files and the
// environment the go command reads its target and flags from.
func (r *Result) reuseKey() [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", r.IR.ModuleDir)
	for _, v := range []string{"GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "CGO_ENABLED", "GOEXPERIMENT"} {
		fmt.Fprintf(h, "%s=%s\x00", v, os.Getenv(v))
	}
	for _, f := range r.Files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Content))
		h.Write(f.Content)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// buildReused is Build when ReuseBuilds is on: the first Build of r's
// version builds it, one at a time, and the others link its binary to
// out once it is done. A Build whose link fails (the binary was removed,
// out exists, or it is on another file system) builds for itself, and
// the next ones link from its binary.
func (r *Result) buildReused(out string) error {
	key := r.reuseKey()
	reused.Lock()
	p := reused.progs[key]
	first := p == nil
	if first {
		p = &reusedProgram{done: make(chan struct{})}
		reused.progs[key] = p
	}
	reused.Unlock()
	if !first {
		<-p.done
		reused.Lock()
		path, sourceDir := p.path, p.sourceDir
		reused.Unlock()
		if path != "" && os.Link(path, out) == nil {
			r.SourceDir = sourceDir
			return nil
		}
	}
	_, err := r.BuildOutput(out)
	if err == nil {
		reused.Lock()
		p.path, p.sourceDir = out, r.SourceDir
		reused.Unlock()
	}
	if first {
		close(p.done)
	}
	return err
}

// reusing reports whether ReuseBuilds is on.
func reusing() bool {
	reused.Lock()
	defer reused.Unlock()
	return reused.on
}
