// Command pipegen compiles a stream pipeline into one Go program.
//
// Usage:
//
//	pipegen check PIPELINE.yaml
//	pipegen generate [-o DIR] [-dump-ir] PIPELINE.yaml
//	pipegen build [-o BINARY] PIPELINE.yaml
//	pipegen verify [-kills N] [-seed S] [-parallelism P] [-o DIR] [-keep-interval] [-set KEY=VALUE]... [-timeout D] PIPELINE.yaml
//
// check parses the pipeline and type-checks it against the Go package it
// names (`package:`, loaded with the go command from the pipeline file's
// directory). Every problem is printed as file:line:col: message, paths
// relative to the working directory; the exit status is 1 when there are
// problems and 2 for a wrong command line.
//
// generate writes the generated main package (main.go and pipeline.go) into
// DIR, by default a directory named after the pipeline next to the
// pipeline file. Nothing is written when the pipeline has problems.
// -dump-ir prints the compiled graph as JSON instead.
//
// build generates the program and builds it with `go build` inside the
// module of the pipeline's package, so that the module's go.mod decides
// every dependency's version; that module must require
// github.com/pipegen/pipegen. The binary goes to BINARY, by default the
// pipeline's name in the working directory.
//
// verify checks that the pipeline's output is exactly-once. It builds the
// program (into DIR, by default a temporary directory, removed when the
// check passes), runs it once on its bounded input without failures, then
// once more from scratch killing it with SIGKILL N times (default 5) at
// random moments and restarting the same command line after each kill, so
// that it resumes from its newest complete checkpoint, until it exits 0.
// It then compares what every file sink committed in the two runs (the
// sink directory's files whose names do not start with '.') as multisets
// of lines: file boundaries differ between runs, the lines must not.
// Stdout sinks are not transactional and are skipped, with a warning.
//
// Each run has its own checkpoint directory and sink directories (set with
// `--set sinks.NAME.path=...`); input paths are used as configured,
// relative to the working directory. The kill moments are N points drawn
// uniformly over the clean run's duration from the seed S (by default
// from the clock), sorted: the i-th process is killed the gap between
// points i-1 and i after it starts. The killed run checkpoints every tenth
// of the clean run's duration (within 20ms..1s) so that checkpoints
// complete between kills, unless -keep-interval is given. -parallelism
// and each -set KEY=VALUE are passed to every run. -timeout (default
// 10m) bounds the clean run; each process of the killed run is bounded by
// 20 times the clean run's duration plus 30s. Progress lines (each kill,
// each restart) go to standard error; the report, with the seed to replay
// a failure with -seed, to standard output. The exit status is 0 when the
// outputs are identical and 1 when they differ or a run failed by itself.
//
// The generated program runs with
//
//	BINARY run [--parallelism N] [--checkpoint-dir DIR] [--from-checkpoint DIR] [--set KEY=VALUE]... [--quiet]
//	BINARY checkpoints [--checkpoint-dir DIR]
//
// and BINARY --help lists every setting --set can change.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pipegen/pipegen/compile"
)

const usage = `usage:
  pipegen check PIPELINE.yaml                    report problems, change nothing
  pipegen generate [-o DIR] [-dump-ir] PIPELINE.yaml  write the generated Go program
  pipegen build [-o BINARY] PIPELINE.yaml        generate and go build the program
  pipegen verify [-kills N] [-seed S] [-parallelism P] [-o DIR] PIPELINE.yaml
                                                 run it clean and with crashes, compare outputs
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError marks a wrong command line (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "check":
		err = check(args[1:], stdout)
	case "generate":
		err = generate(args[1:], stdout)
	case "build":
		err = build(args[1:], stdout)
	case "verify":
		err = verify(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "pipegen: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "pipegen %s: %v\n%s", args[0], ue.err, usage)
		return 2
	}
	if l, ok := compile.IsDiagnostics(err); ok {
		wd, _ := os.Getwd()
		fmt.Fprint(stderr, l.Format(wd))
		return 1
	}
	fmt.Fprintf(stderr, "pipegen %s: %v\n", args[0], err)
	return 1
}

// parse parses a subcommand's flags and returns its one pipeline file.
func parse(fs *flag.FlagSet, args []string) (string, error) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return "", wrapUsage(err)
	}
	if fs.NArg() != 1 {
		return "", wrapUsage(fmt.Errorf("want one pipeline file, got %d arguments", fs.NArg()))
	}
	return fs.Arg(0), nil
}

func wrapUsage(err error) error { return &usageError{err} }

func check(args []string, stdout io.Writer) error {
	path, err := parse(flag.NewFlagSet("check", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	p, err := compile.Check(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: pipeline %s is fine: %d nodes\n", path, p.Name, len(p.Nodes))
	return nil
}

func generate(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	out := fs.String("o", "", "")
	dump := fs.Bool("dump-ir", false, "")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	res, err := compile.Generate(path)
	if err != nil {
		return err
	}
	if *dump {
		b, err := compile.DumpIR(res.IR)
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(filepath.Dir(path), res.IR.Name)
	}
	if err := res.Commit(dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d files to %s\n", len(res.Files), dir)
	return nil
}

func build(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	out := fs.String("o", "", "")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	res, err := compile.Generate(path)
	if err != nil {
		return err
	}
	bin := *out
	if bin == "" {
		bin = res.IR.Name
	}
	if err := res.Build(bin); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built %s\n", bin)
	return nil
}
