// Package p is the golden case of unknown, duplicate and missing keys.
package p

func Upper(s string) string { return s }
