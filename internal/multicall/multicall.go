// Package multicall links many generated programs into one binary, for
// tests that build and run dozens of pipelines: a link of a pipeline
// program costs about 1.7 CPU-seconds on a 2-core machine, most of what
// building it costs, while one link of them all costs a few.
//
// Each program's main package is laid into the go command's overlay as a
// package of its own whose package clause names it program and whose func
// main is Main; a generated main package runs the Main of the program
// named by the name it was run by (os.Args[0]), and each program's path
// is a symbolic link to that one binary, named after it (busybox's way).
// The programs' files are otherwise compiled as they are. What differs
// from building each alone: the package inits of every program's imports
// run in each, and each program's func main is called by another.
package multicall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Program is a main package to build.
type Program struct {
	// Name names the program's link in the output folder and its
	// package's folder in the overlay: a file name, unique in a build.
	Name string
	// Files holds the package's Go files (not tests) by file name.
	Files map[string][]byte
}

// Options says where the programs are built.
type Options struct {
	// ModuleDir and ModulePath are the folder and path of the module the
	// programs are built in: their imports resolve from there.
	ModuleDir, ModulePath string
	// Dir is where the binary and the programs' links are written, and
	// the files of the overlay.
	Dir string
	// Gcflags are compiler flags for the programs' own packages and
	// those of the Overlay's files only (-m: their escape analysis; -l:
	// no inlining, a faster compile), or "". Build adds -dwarf=false: a
	// flag for these packages replaces GOFLAGS' (make test's
	// -gcflags=all=-dwarf=false), and a test binary needs no debug
	// information.
	Gcflags string
	// Overlay lays more files, by absolute path, over the module's for
	// the build: the generated files of the packages that programs
	// import (pipegen generate's output for an annotated package).
	Overlay map[string][]byte
}

// Built is the outcome of a build.
type Built struct {
	// Paths holds each program's path by its name.
	Paths map[string]string
	// Compiler holds what the compiler printed about each program's
	// package, by its name (with Options.Gcflags -m, the escape analysis).
	Compiler map[string]string
}

// buildDir is the folder of the programs' packages in the module, only in
// the go command's overlay: nothing is written there.
const buildDir = "pipegen_multicall"

// Build links programs into one binary in opts.Dir.
func Build(programs []Program, opts Options) (*Built, error) {
	overlay := struct{ Replace map[string]string }{Replace: map[string]string{}}
	lay := func(rel string, src []byte) error {
		file := filepath.Join(opts.Dir, "src", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		overlay.Replace[filepath.Join(opts.ModuleDir, buildDir, filepath.FromSlash(rel))] = file
		return os.WriteFile(file, src, 0o644)
	}
	byPackage := map[string]string{} // import path -> program name
	var names []string
	for _, p := range programs {
		if p.Name == "" || p.Name == "all" || strings.ContainsAny(p.Name, `/\`) || slices.Contains(names, p.Name) {
			return nil, fmt.Errorf("program name %q: want a unique file name other than all", p.Name)
		}
		mains := 0
		for file, src := range p.Files {
			lib, isMain, err := asLibrary(src)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %v", p.Name, file, err)
			}
			if isMain {
				mains++
			}
			if err := lay(p.Name+"/"+file, lib); err != nil {
				return nil, err
			}
		}
		if mains != 1 {
			return nil, fmt.Errorf("%s: %d files declare func main, want 1", p.Name, mains)
		}
		names = append(names, p.Name)
		byPackage[opts.ModulePath+"/"+buildDir+"/"+p.Name] = p.Name
	}
	if err := lay("all/main.go", dispatcher(opts.ModulePath, names)); err != nil {
		return nil, err
	}
	for i, path := range slices.Sorted(maps.Keys(opts.Overlay)) {
		if !filepath.IsAbs(path) {
			return nil, fmt.Errorf("overlay file %s: want an absolute path", path)
		}
		file := filepath.Join(opts.Dir, "overlay", fmt.Sprintf("%d-%s", i, filepath.Base(path)))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(file, opts.Overlay[path], 0o644); err != nil {
			return nil, err
		}
		overlay.Replace[path] = file
	}
	data, err := json.Marshal(overlay)
	if err != nil {
		return nil, err
	}
	ov := filepath.Join(opts.Dir, "overlay.json")
	if err := os.WriteFile(ov, data, 0o644); err != nil {
		return nil, err
	}
	bin := filepath.Join(opts.Dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	all := filepath.Join(bin, "all")
	gcflags := strings.TrimSpace("-dwarf=false " + opts.Gcflags)
	args := []string{"build", "-overlay", ov, "-o", all, "-gcflags=./" + buildDir + "/...=" + gcflags}
	for _, dir := range overlayDirs(opts) {
		args = append(args, "-gcflags=./"+dir+"="+gcflags)
	}
	cmd := exec.Command("go", append(args, "./"+buildDir+"/all")...)
	cmd.Dir = opts.ModuleDir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build of %d programs in one binary: %v\n%s", len(names), err, stderr.String())
	}
	built := &Built{Paths: map[string]string{}, Compiler: map[string]string{}}
	for _, name := range names {
		link := filepath.Join(bin, name)
		if err := os.Symlink(all, link); err != nil {
			return nil, err
		}
		built.Paths[name] = link
	}
	for path, printed := range CompilerOutput(stderr.String()) {
		if name, ok := byPackage[path]; ok {
			built.Compiler[name] = printed
		}
	}
	return built, nil
}

// CompilerOutput splits what the go command printed (with -gcflags=-m,
// say) by package: it heads what the compiler printed about a package
// with "# " and its import path.
func CompilerOutput(out string) map[string]string {
	byPackage := map[string]string{}
	var current string
	for _, line := range strings.SplitAfter(out, "\n") {
		if path, ok := strings.CutPrefix(line, "# "); ok {
			current = strings.TrimSpace(path)
			continue
		}
		if current != "" {
			byPackage[current] += line
		}
	}
	return byPackage
}

// overlayDirs are the folders of the Overlay's files, relative to the
// module's, slash-separated and sorted.
func overlayDirs(opts Options) []string {
	var dirs []string
	for path := range opts.Overlay {
		rel, err := filepath.Rel(opts.ModuleDir, filepath.Dir(path))
		if rel = filepath.ToSlash(rel); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue // not a package of the module: its flags are the go command's
		}
		if !slices.Contains(dirs, rel) {
			dirs = append(dirs, rel)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// asLibrary turns a file of a main package into one of package program
// whose func main, if the file declares it, is Main.
func asLibrary(src []byte) (lib []byte, isMain bool, err error) {
	const clause, mainFunc = "\npackage main\n", "\nfunc main() {\n"
	// A newline first, so that a clause on the first line is found too.
	lib = append([]byte("\n"), src...)
	if bytes.Count(lib, []byte(clause)) != 1 {
		return nil, false, fmt.Errorf("no package clause %q at the start of a line", strings.TrimSpace(clause))
	}
	lib = bytes.Replace(lib, []byte(clause), []byte("\npackage program\n"), 1)
	switch bytes.Count(lib, []byte(mainFunc)) {
	case 0:
	case 1:
		lib, isMain = bytes.Replace(lib, []byte(mainFunc), []byte("\nfunc Main() {\n"), 1), true
	default:
		return nil, false, fmt.Errorf("func main declared more than once")
	}
	return lib[1:], isMain, nil
}

// dispatcher is the main package of the binary: it runs the program whose
// name it was run by.
func dispatcher(modulePath string, names []string) []byte {
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"path/filepath\"\n\n")
	for i, name := range names {
		fmt.Fprintf(&b, "\tp%d %q\n", i, modulePath+"/"+buildDir+"/"+name)
	}
	b.WriteString(")\n\nvar programs = map[string]func(){\n")
	for i, name := range names {
		fmt.Fprintf(&b, "\t%q: p%d.Main,\n", name, i)
	}
	b.WriteString(`}

func main() {
	run, ok := programs[filepath.Base(os.Args[0])]
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: no program of this name in this binary\n", os.Args[0])
		os.Exit(2)
	}
	run()
}
`)
	return b.Bytes()
}
