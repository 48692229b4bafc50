// Package layers holds a test of the project's package structure: which
// package may import which. The table in layers_test.go is the picture of
// the architecture that docs/runtime.md draws; a change that breaks it
// fails the test, and either the change or the table is wrong.
package layers
