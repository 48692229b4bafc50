// Package e2ekafka holds two pipelines for the Kafka connector's crash
// tests: Kafka -> file (tofile.yaml) and file -> Kafka (fromfile.yaml).
package e2ekafka

import "strings"

// Tag marks a line as having passed through the job.
func Tag(s string) string { return "seen " + strings.ToUpper(s) }
