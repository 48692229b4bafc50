// Package examples holds the tests that concern every example at once:
// each example's pipelines are written both in YAML and as //pipegen:
// directives, and the two must compile to the same program; and
// examples/annotated, a module of its own that uses go generate, must be
// up to date with the compiler.
package examples
