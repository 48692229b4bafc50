// Package docs is the manual, in Markdown, and pipeline.schema.json (the
// output of `pipegen schema`); its tests keep both in step with the code.
package docs
