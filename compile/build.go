package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// overlayDir is where the generated main package appears inside the user's
// module while it is built. It exists only in the go command's overlay:
// nothing is written into the user's tree.
const overlayDir = "pipegen_build"

// Build compiles the generated program into the binary out, inside the
// user's module so that its go.mod decides every dependency's version, as
// for any program of the module.
//
// It keeps the generated source in the user's cache (see sourceDir) and
// sets SourceDir; the go command compiles a copy that starts with a
// //line directive naming the kept file, so that the program's panics,
// stack traces and the go command's errors name files that exist, at the
// right lines. When there is no cache to keep it in, SourceDir stays empty
// and the program names files that do not.
//
// After ReuseBuilds, a Build of files built before in this process hard
// links that build's binary to out (reuse.go).
func (r *Result) Build(out string) error {
	if reusing() {
		return r.buildReused(out)
	}
	_, err := r.BuildOutput(out)
	return err
}

// BuildOutput is Build with flags added to the go command's (a test's
// -gcflags=-m); it returns what the go command printed.
func (r *Result) BuildOutput(out string, flags ...string) (string, error) {
	return r.BuildWith(out, BuildOptions{Flags: flags})
}

// BuildOptions are the choices of BuildWith.
type BuildOptions struct {
	// Flags are added to the go command's.
	Flags []string
	// Progress, if set, learns of each module the go command downloads
	// and each package it compiles, as it starts them (its -v): a build
	// with a cold cache compiles the runtime and its dependencies, a
	// minute of CPU, and a profile-guided one compiles every package
	// again. A package the go command finds in its cache is neither
	// compiled nor told.
	Progress func(BuildStep)
}

// A BuildStep is what the go command began to do.
type BuildStep struct {
	// Download is set for a module's download, Path then the module and
	// its version ("github.com/cockroachdb/pebble/v2 v2.1.0"); otherwise
	// Path is the import path of a package the go command compiles.
	Download bool
	Path     string
	// Program is set for the generated program's own package, the last
	// the go command compiles before it links the binary.
	Program bool
}

// BuildWith is Build with the options opts, but always runs the go
// command (ReuseBuilds aside); it returns what the go command printed
// (without the steps that Progress was told of).
func (r *Result) BuildWith(out string, opts BuildOptions) (string, error) {
	if r.IR.ModuleDir == "" {
		return "", fmt.Errorf("the pipeline's package is not in a Go module: run `go mod init` in its directory first")
	}
	tmp, err := os.MkdirTemp("", "pipegen-build-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)

	r.SourceDir = ""
	if dir, err := r.keepSource(); err == nil {
		r.SourceDir = dir
	}
	pkgDir := filepath.Join(r.IR.ModuleDir, overlayDir, r.IR.Name)
	overlay := struct{ Replace map[string]string }{Replace: map[string]string{}}
	for _, f := range r.Files {
		src := filepath.Join(tmp, f.Name)
		content := f.Content
		if r.SourceDir != "" {
			content = append([]byte("//line "+filepath.Join(r.SourceDir, f.Name)+":1\n"), content...)
		}
		if err := os.WriteFile(src, content, 0o644); err != nil {
			return "", err
		}
		overlay.Replace[filepath.Join(pkgDir, f.Name)] = src
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	data, err := json.Marshal(overlay)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(overlayFile, data, 0o644); err != nil {
		return "", err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	args := []string{"build", "-overlay", overlayFile, "-o", absOut}
	if targetOS() == "linux" {
		args = append(args, staticTags(goflags(r.IR.ModuleDir))...)
	}
	args = append(args, opts.Flags...)
	if opts.Progress != nil {
		args = append(args, "-v")
	}
	cmd := exec.Command("go", append(args, "./"+overlayDir+"/"+r.IR.Name)...)
	cmd.Dir = r.IR.ModuleDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var steps *stepWriter
	if opts.Progress != nil {
		steps = &stepWriter{rest: &stderr, step: opts.Progress, program: "/" + overlayDir + "/" + r.IR.Name}
		cmd.Stderr = steps
	}
	err = cmd.Run()
	if steps != nil {
		// A last line without its newline.
		stderr.Write(steps.partial)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if missingRequirement(msg) {
			return "", requirementError(r.IR.ModuleDir, msg)
		}
		return "", fmt.Errorf("go build of the generated program failed: %v\n%s", err, msg)
	}
	return stderr.String(), nil
}

// stepWriter takes what the go command prints with -v: the lines that
// name a package it compiles or a module it downloads go to step, the
// rest (errors, the compiler's messages) to rest. A package's line is
// its import path alone; a message has a space or a colon, or starts
// with "# " (the package it is about).
type stepWriter struct {
	rest    *bytes.Buffer
	step    func(BuildStep)
	program string // how the import path of the program's package ends
	partial []byte
}

func (w *stepWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := w.partial[:i+1]
		text := string(bytes.TrimRight(line, "\r\n"))
		switch {
		case strings.HasPrefix(text, "go: downloading "):
			w.step(BuildStep{Download: true, Path: strings.TrimPrefix(text, "go: downloading ")})
		case importPathLine.MatchString(text):
			w.step(BuildStep{Path: text, Program: strings.HasSuffix(text, w.program)})
		default:
			w.rest.Write(line)
		}
		w.partial = w.partial[i+1:]
	}
}

// importPathLine matches a line that is an import path, as the go
// command's -v prints a package it compiles.
var importPathLine = regexp.MustCompile(`^[A-Za-z0-9_.~+-]+(/[A-Za-z0-9_.~+-]+)*$`)

// staticTags are the build tags that make the program one static binary
// when nothing in it needs cgo: the net and os/user packages in pure Go
// (DNS from /etc/resolv.conf and /etc/hosts, as in any Go program built
// without cgo) instead of through the C library. A program linked to the
// C library starts slower (the dynamic loader, the C library's start-up:
// 3.5 ms of CPU of a Nexmark query's 25) and runs only where that library
// is. The go command takes a -tags of the command line over one of
// GOFLAGS, so the tags GOFLAGS sets (goflags) are kept among them.
func staticTags(goflags string) []string {
	var tags []string
	for _, f := range strings.Fields(goflags) {
		if v, ok := strings.CutPrefix(strings.TrimLeft(f, "-"), "tags="); ok {
			tags = strings.FieldsFunc(v, func(r rune) bool { return r == ',' })
		}
	}
	for _, t := range []string{"netgo", "osusergo"} {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return []string{"-tags", strings.Join(tags, ",")}
}

// targetOS is the system the program is built for: GOOS, else this one.
// The static tags are for Linux only: elsewhere (macOS) netgo would make
// Go resolve names itself instead of asking the system, which knows of
// VPNs and local names.
func targetOS() string {
	if goos := os.Getenv("GOOS"); goos != "" {
		return goos
	}
	return runtime.GOOS
}

// goflags is GOFLAGS as the go command sees it in dir: the
// environment's, else the one `go env -w` keeps; "" when the go command
// cannot say.
func goflags(dir string) string {
	if v, ok := os.LookupEnv("GOFLAGS"); ok {
		return v
	}
	cmd := exec.Command("go", "env", "GOFLAGS")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// cacheTrim is how long a kept source stays in the cache unused: the
// directory of a pipeline not built for that long is removed by the next
// build of any pipeline.
const cacheTrim = 7 * 24 * time.Hour

// keptVersions is how many generated versions of one pipeline file the
// cache keeps: the binaries built from the latest few still name files
// that exist, and a pipeline edited all day does not fill the cache.
const keptVersions = 4

// sourceDir is the directory of the user's cache where Build keeps the
// generated source of the pipeline:
// os.UserCacheDir()/pipegen/NAME-PATH/VERSION, PATH the first 12 hex
// digits of the SHA-256 of the pipeline file's absolute path, so that two
// pipelines of one name do not share it, and VERSION the same of the
// generated files. A version's files never change once written: two
// builds of one pipeline file by different pipegen versions, or of
// different edits of it, at the same time, each keep their own, and the
// files a built program's stack traces name stay what it was built from.
func (r *Result) sourceDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	path := sha256.Sum256([]byte(filepath.Join(r.IR.ModuleDir, filepath.FromSlash(r.IR.Source))))
	version := sha256.New()
	for _, f := range r.Files {
		fmt.Fprintf(version, "%s\x00%d\x00", f.Name, len(f.Content))
		version.Write(f.Content)
	}
	return filepath.Join(cache, "pipegen", fmt.Sprintf("%s-%x", r.IR.Name, path[:6]), fmt.Sprintf("%x", version.Sum(nil)[:6])), nil
}

// keepSource writes the generated files into sourceDir (a build of the
// same version rewrites the same bytes), keeps the keptVersions most
// recently built versions of the pipeline, and removes the directories
// of pipelines not built for cacheTrim.
func (r *Result) keepSource() (string, error) {
	dir, err := r.sourceDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	keep := map[string]bool{}
	for _, f := range r.Files {
		if err := writeFileAtomic(filepath.Join(dir, f.Name), f.Content); err != nil {
			return "", err
		}
		keep[f.Name] = true
	}
	// Files of the version that are not generated any more can only be
	// leftovers of an interrupted write or of hands; they go.
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if !keep[e.Name()] && !strings.HasPrefix(e.Name(), ".") {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}
	now := time.Now()
	pipeline := filepath.Dir(dir)
	for _, d := range []string{dir, pipeline} {
		if err := os.Chtimes(d, now, now); err != nil {
			return "", err
		}
	}
	trimVersions(pipeline, filepath.Base(dir))
	if others, err := os.ReadDir(filepath.Dir(pipeline)); err == nil {
		for _, e := range others {
			if info, err := e.Info(); err == nil && e.IsDir() && now.Sub(info.ModTime()) > cacheTrim {
				os.RemoveAll(filepath.Join(filepath.Dir(pipeline), e.Name()))
			}
		}
	}
	return dir, nil
}

// trimVersions removes the versions in a pipeline's directory but the
// keptVersions most recently built, current among them, and what is
// not a version directory (the files of the single directory that
// pipegen kept before versions).
func trimVersions(pipeline, current string) {
	entries, err := os.ReadDir(pipeline)
	if err != nil {
		return
	}
	type version struct {
		name string
		at   time.Time
	}
	var versions []version
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		if !e.IsDir() {
			os.Remove(filepath.Join(pipeline, e.Name()))
			continue
		}
		if e.Name() != current {
			versions = append(versions, version{e.Name(), info.ModTime()})
		}
	}
	slices.SortFunc(versions, func(a, b version) int { return b.at.Compare(a.at) })
	for i, v := range versions {
		if i >= keptVersions-1 {
			os.RemoveAll(filepath.Join(pipeline, v.name))
		}
	}
}

// toolPath is the package a module names in its tool directive to have
// pipegen as a tool: `go tool pipegen` then runs the pipegen its go.mod
// requires, and go.mod and go.sum keep every module the generated
// programs need, since cmd/pipegen imports the runtime.
const toolPath = modulePath + "/cmd/pipegen"

// missingRequirement reports whether go build failed because the module's
// go.mod or go.sum lacks a module, as the go command says it with and
// without -mod=readonly.
func missingRequirement(msg string) bool {
	for _, s := range []string{"no required module provides package", "cannot find module providing package", "missing go.sum entry", "updates to go.mod needed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

var goPos = regexp.MustCompile(`^\S+:\d+:\d+: `)

// requirementError says which command, run in the module's directory,
// gives the module what the generated program needs, going by what its
// go.mod holds: without a requirement of pipegen, go get -tool adds one
// (at the version of the pipegen that runs, whose generated code it
// matches); with one, the tool directive and go mod tidy add the rest.
func requirementError(dir, goMsg string) error {
	// What is missing, as the go command says it first, without its
	// position and its own advice (go get of a package at a version).
	first, _, _ := strings.Cut(goMsg, "\n")
	first, _, _ = strings.Cut(goPos.ReplaceAllString(first, ""), "; to add")
	var mod struct {
		Require []struct{ Path string }
		Tool    []struct{ Path string }
	}
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	if out, err := cmd.Output(); err != nil || json.Unmarshal(out, &mod) != nil {
		return fmt.Errorf("go build of the generated program failed: the module in %s lacks a requirement\n%s", dir, goMsg)
	}
	required := slices.ContainsFunc(mod.Require, func(m struct{ Path string }) bool { return m.Path == modulePath })
	tool := slices.ContainsFunc(mod.Tool, func(m struct{ Path string }) bool { return m.Path == toolPath })
	switch {
	case !required:
		version := Version()
		if !strings.HasPrefix(version, "v") {
			version = "latest"
		}
		return fmt.Errorf("the module does not require %s, whose runtime the generated program imports: run `go get -tool %s@%s` in %s", modulePath, toolPath, version, dir)
	case !tool:
		return fmt.Errorf("the module requires %s, but its go.mod or go.sum lacks modules the generated program needs (%s): run `go mod edit -tool=%s && go mod tidy` in %s; with pipegen as a tool, go mod tidy keeps them", modulePath, first, toolPath, dir)
	}
	return fmt.Errorf("the module's go.mod or go.sum lacks modules the generated program needs (%s): run `go mod tidy` in %s", first, dir)
}
