package compile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
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
// links the first one's binary instead. The binary is also linked into a
// folder of reused's own (dir), so that it outlives the folder of the
// test that built it: the tests of a package mostly run one after the
// other, and each removes its folder when it ends.
var reused struct {
	sync.Mutex
	on    bool
	dir   string // the kept binaries, one per version, named by its key
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
// one built instead of building it again, until stop is called. Only for
// programs (test binaries) during whose run the user's packages, what
// they import and the go command's settings do not change: the go
// command is not asked again whether the binary is up to date. stop
// removes the folder that keeps the binaries (a TestMain calls it after
// m.Run); the outputs of the Builds stay.
func ReuseBuilds() (stop func(), err error) {
	reused.Lock()
	defer reused.Unlock()
	if reused.on {
		return nil, fmt.Errorf("compile.ReuseBuilds: the builds are reused already")
	}
	dir, err := os.MkdirTemp("", "pipegen-reused-*")
	if err != nil {
		return nil, fmt.Errorf("compile.ReuseBuilds: a folder for the programs built: %w", err)
	}
	reused.on, reused.dir = true, dir
	reused.progs = map[[sha256.Size]byte]*reusedProgram{}
	return func() {
		reused.Lock()
		defer reused.Unlock()
		reused.on, reused.dir, reused.progs = false, "", nil
		os.RemoveAll(dir)
	}, nil
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
// out once it is done. A Build whose link fails (the kept binary was
// removed, out exists, or it is on another file system) builds for
// itself, and the next ones link from its binary.
func (r *Result) buildReused(out string) error {
	key := r.reuseKey()
	reused.Lock()
	p := reused.progs[key]
	first := p == nil
	if first {
		p = &reusedProgram{done: make(chan struct{})}
		reused.progs[key] = p
	}
	dir := reused.dir
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
		// Kept under reused's folder when it can be; else out itself,
		// for as long as its test keeps it.
		path := out
		kept := filepath.Join(dir, hex.EncodeToString(key[:]))
		os.Remove(kept)
		if os.Link(out, kept) == nil {
			path = kept
		}
		reused.Lock()
		p.path, p.sourceDir = path, r.SourceDir
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
