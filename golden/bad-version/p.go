// Package p is the golden case of an unsupported format version.
package p
