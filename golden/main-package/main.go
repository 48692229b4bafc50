// Command main is the golden case of a pipeline whose package is a main
// package, which the generated program cannot import.
package main

func Same(s string) string { return s }

func main() {}
