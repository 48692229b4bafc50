// Package golden pins the compiler's output: every directory here is a case
// with a pipeline.yaml and the user's Go package, and want/ holds what the
// compiler must produce for it: the generated program (main.go and
// pipeline.go, which `go build ./...` compiles like any package), or
// stderr.txt with the diagnostics of a pipeline that must fail.
//
// A case with a run.txt is also built and run: run.txt holds the program's
// arguments (one per line), files in input/ are copied into its working
// directory, and want/output.txt holds the sorted lines of every file the
// program writes (each prefixed with its name) and of its standard output.
//
//	go test ./golden -update
//
// rewrites want/ from the current compiler; review the diff like code.
//
// Files named *_test.go in want/ are written by hand and left alone: tests
// of the generated code in its own package, such as the round trips and
// fuzz targets of the state serializers (`make fuzz` runs the fuzzers).
package golden
