// Package config holds a job's settings as the generated program compiled
// them, and what the command line may change of them: `--set KEY=VALUE`
// overrides by their path in the pipeline file, then Resolve fills in
// every default.
package config
