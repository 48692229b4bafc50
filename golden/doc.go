// Package golden pins the compiler's output: every directory here is a case
// with a pipeline.yaml and the user's Go package, and want/ holds what the
// compiler must produce for it: the generated program (main.go and
// pipeline.go, which `go build ./...` compiles like any package), or
// stderr.txt with the diagnostics of a pipeline that must fail. A pipeline
// that compiles with warnings has both: its program, and its warnings in
// stderr.txt.
//
// A case with a run.txt is also built and run: run.txt holds the program's
// arguments (one per line), files in input/ are copied into its working
// directory, and want/output.txt holds the sorted lines of every file the
// program writes (each prefixed with its name) and of its standard output.
// The same pipeline generated for the other state backend must print and
// write the same. The YAML cases' programs, both backends, are linked into
// one binary (internal/multicall), which each runs as by its own name.
//
//	go test ./golden -update
//
// rewrites want/ from the current compiler; review the diff like code.
//
// Files named *_test.go in want/ are written by hand and left alone: tests
// of the generated code in its own package, such as the round trips and
// fuzz targets of the state serializers (`make fuzz` runs the fuzzers).
//
// determinism_test.go runs the running-totals program at several
// parallelisms and checks that its output is the same every time.
//
// The cases of the annotation front end (annotated-*) have no
// pipeline.yaml: their input is the Go package of the directory, with its
// //pipegen: directives. want/ holds what `pipegen generate -cmd` writes
// into that package, each file with a .golden suffix (NAME_pipegen.go.golden,
// cmd/NAME/main.go.golden), which keeps the go command from compiling a
// file of the package alone; or stderr.txt. With run.txt, the case's
// command is built and the package vetted with the generated files laid
// over it (go build -overlay), then run as above.
package golden
