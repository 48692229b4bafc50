// Package p is the golden case of a file that is not YAML.
package p
