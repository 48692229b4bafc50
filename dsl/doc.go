// Package dsl holds the compiler's front ends and its type checker. The
// YAML parser (ParseYAML) and the //pipegen: directive parser (ParseAnnotations)
// both produce a Spec: the pipeline as written, every value with its
// position, its keys read against the settings table (runtime/settings).
// Resolve loads the user's Go package with go/packages, checks every
// function, type, key and window against it, and produces the IR (package
// ir) that codegen turns into Go. Every problem is collected and reported
// with its position, in the syntax of the front end it came from.
package dsl
