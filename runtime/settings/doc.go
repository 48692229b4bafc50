// Package settings is the schema of a pipeline file: one table of every key
// a pipeline can set, read by the compiler's front ends and type checker, by
// the generated program's `run --set`, by `pipegen schema` (a JSON Schema
// for editors) and checked against docs/dsl.md.
//
// Each key is a [Setting]: its path, the kind of its value, its default, the
// values it allows, a line of help, whether it is fixed when the pipeline is
// compiled ([Setting.Static]), and [Setting.Parse], the one function that
// reads and checks a value wherever it was written. Its error, an [*Error],
// says the same thing for a value from YAML, from a //pipegen: directive and
// from `--set`; only the way it names keys differs, which a [Syntax]
// decides.
//
// The table holds three scopes: the pipeline's own keys ([Lookup]: version,
// name, parallelism, checkpoint.interval, ...), the keys of sources,
// operators and sinks ([Node]: name, uid, parallelism, window.every, ...),
// and the options of each built-in connector ([LookupConnector], then
// [Connector.Option]: path, format, rate, ...).
//
// # Using it for --set
//
// A generated program applies `--set KEY=VALUE` like this; an error of
// Parse is an *Error, whose Error method names keys as --set does:
//
//	// A pipeline-wide setting: parallelism, max-parallelism, checkpoint.*, restart.*.
//	s := settings.Lookup(key)
//	switch {
//	case s == nil || !s.HasValue():
//		// unknown: settings.Overridable() lists what --set can change
//	case s.Static:
//		// fixed when compiled (state.backend): refuse, "rebuild"
//	}
//	v, err := s.Parse(value) // "checkpoint.interval must be more than 0: ..."
//	if err != nil {
//		return fmt.Errorf("--set %s=%s: %w", key, value, err)
//	}
//	cfg.Checkpoint.Interval = v.(time.Duration) // Parse's Go type follows s.Kind
//
//	// SECTION.NAME.KEY: a node's key. Find node NAME in SECTION first.
//	scope := settings.ScopeOf(section) // settings.Source for "sources"
//	s = settings.Node(scope, "", key)  // parallelism; every other node key is Static
//	if s == nil && node.Connector != "" {
//		s = settings.LookupConnector(scope, node.Connector).Option(key)
//	}
//	// then as above; a connector option is also refused when
//	// s.CheckFormat(node.Format) says it does not apply to the format.
//
// Each setting's Help is a line for `--help`; its Default, parsed by
// DefaultValue, is what a pipeline that does not set it gets.
//
// Parse returns int for Int, float64 for Float, time.Duration for Duration,
// bool for Bool and string for every other kind; a list's items are parsed
// one by one.
//
// The package is a leaf: it imports only the standard library, so that
// both the compiler and every generated program can link it.
package settings
