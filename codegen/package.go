package codegen

import (
	"fmt"
	"path"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/runtime/version"
	"github.com/pipegen/pipegen/templates"
)

// BuildTag excludes the files generated in package mode when pipegen
// itself loads the user's package (go list -tags pipegen), so that a stale
// generated file, which may no longer compile against the user's changed
// code, never stops the next generate.
const BuildTag = "pipegen"

// PackageFile is the name of the file a pipeline generates into the
// user's package. The suffix keeps Go's file name constraints (_linux,
// _test) off it whatever the pipeline's name.
func PackageFile(name string) string { return name + "_pipegen.go" }

// TestFile is the file `pipegen generate -test` writes for a pipeline
// into the user's package: compiled only into the package's tests, it
// holds the pipeline wired to the test driver and the pipeline's Driver.
func TestFile(name string) string { return name + "_pipegen_test.go" }

// DriverType and DriverFunc name the test driver of a pipeline generated
// in package mode: SessionsDriver, made by NewSessionsDriver.
func DriverType(name string) string { return exported(name) + "Driver" }
func DriverFunc(name string) string { return "New" + DriverType(name) }

// CmdFile is the main package `pipegen generate -cmd` writes for a
// pipeline, slash-separated and relative to the user's package directory.
func CmdFile(name string) string { return "cmd/" + name + "/main.go" }

// RunFunc is the exported entry point of a pipeline generated in package
// mode: func RunWordcount(args []string) int.
func RunFunc(name string) string { return "Run" + exported(name) }

// Prefix starts every other package-level name generated in package mode:
// pipegenWordcountConfig, pipegenWordcountCountsChain, ...
func Prefix(name string) string { return "pipegen" + exported(name) }

// exported turns a pipeline name ([a-z][a-z0-9-]*) into an exported Go
// identifier: word-count -> WordCount.
func exported(name string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(name, "-") {
		b.WriteString(upperFirst(part))
	}
	return b.String()
}

// packageFiles generates the pipeline into the user's package: the
// graph, as for a main package but with the names of package mode (see
// namer) and what main.go holds in a main package (the version guard and
// the entry point) in one file; with Options.Cmd also a main package that
// calls the entry point.
func (g *gen) packageFiles() ([]File, error) {
	name := PackageFile(g.p.Name)
	src, err := g.pipelineFile(name)
	if err != nil {
		return nil, err
	}
	files := []File{{Name: name, Content: src}}
	if !g.opts.Cmd {
		return files, nil
	}
	pkg := g.p.Package
	data := templates.Cmd{
		Header:    g.opts.header(g.p.Source),
		Name:      g.p.Name,
		PkgPath:   pkg.Path,
		Qualifier: pkg.Name,
		File:      name,
		Func:      RunFunc(g.p.Name),
	}
	switch {
	case pkg.Name == "os":
		data.Alias, data.Qualifier = "pipeline", "pipeline"
	case pkg.Name != path.Base(pkg.Path):
		data.Alias = pkg.Name
	}
	cmd := CmdFile(g.p.Name)
	main, err := templates.Render("cmd.go.tmpl", data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if main, err = formatSource(cmd, main); err != nil {
		return nil, err
	}
	return append(files, File{Name: cmd, Content: main}), nil
}

// entry emits what main.go holds in a main package: the runtime version
// guard, and the entry point, whose name is fixed (the user calls it; the
// compile step checks that the user's package does not declare it).
func (g *gen) entry(f *jen.File) {
	v := version.Gen
	run := RunFunc(g.p.Name)
	g.names.reserve(run)
	f.Comment(fmt.Sprintf("This code was generated for version %d of the runtime's contract; a runtime", v))
	f.Comment("that cannot run it fails to compile here.")
	f.Const().Defs(
		jen.Id("_").Op("=").Qual(runtimePath, "EnforceVersion").Call(jen.Lit(v).Op("-").Qual(runtimePath, "MinGenVersion")),
		jen.Id("_").Op("=").Qual(runtimePath, "EnforceVersion").Call(jen.Qual(runtimePath, "GenVersion").Op("-").Lit(v)),
	)
	f.Line()
	// Written as they are: jennifer would turn "//" into "// ".
	for _, line := range []string{
		"// " + run + " runs the stream pipeline " + g.p.Name + ", compiled by pipegen from the",
		"// //pipegen: directives of this package. args is a command line without the",
		"// program's name:",
		"//",
		"//\trun [--parallelism N] [--checkpoint-dir DIR] [--from-checkpoint DIR] [--set KEY=VALUE]... [--quiet]",
		"//\tcheckpoints [--checkpoint-dir DIR]",
		"//\t--help",
		"//",
		"// It returns the exit status: 0 when the job is done, 1 when it failed, 2 for",
		"// a wrong command line.",
	} {
		f.Comment(line)
	}
	f.Func().Id(run).Params(jen.Id("args").Index().String()).Int().Block(
		jen.Return(jen.Qual(runtimePath, "Run").Call(jen.Qual(runtimePath, "Program").Values(
			field("Config", jen.Id(g.own("config"))),
			field("Build", jen.Id(g.own("build"))),
		), jen.Id("args"))),
	)
}
