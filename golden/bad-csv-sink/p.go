// Package p is the golden case of csv sinks that cannot write their
// records, and of csv options on the wrong format or connector.
package p

import "time"

// Row has a field csv cannot write.
type Row struct {
	Name string
	Tags []string
}

// Tagged leaves out the field csv cannot write: it compiles.
type Tagged struct {
	Name string
	At   time.Time
	Tags []string `csv:"-"`
}

// Twice names one column twice, once by tag and once by field name.
type Twice struct {
	ID   int64 `csv:"name"`
	Name string
}

// Hidden has no exported field.
type Hidden struct{ n int }

func ToRow(s string) Row       { return Row{} }
func ToTagged(s string) Tagged { return Tagged{} }
func ToTwice(s string) Twice   { return Twice{} }
func ToHidden(s string) Hidden { return Hidden{} }
