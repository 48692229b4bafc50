package settings

import (
	"regexp"
	"sync"
	"time"
)

// The value shapes several keys share.
var (
	// Names become names of files and folders (the program, checkpoint
	// state files): bounded in length and free of path separators.
	pipelineName = pattern(`^[a-z][a-z0-9-]{0,63}$`)
	nodeName     = pattern(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	nodeRef      = pattern(`^[A-Za-z_][A-Za-z0-9_-]{0,63}(\.[A-Za-z_][A-Za-z0-9_-]{0,63})?$`)
	nodeUID      = pattern(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)
)

// A Pattern is a regular expression compiled when it is first matched.
// Every program that pipegen generates links this table, and most never
// parse a name: compiled at start, these four (each counted repetition is
// 64 copies of its class) took 1.2-2 ms of a generated program's start,
// 9% of its CPU then.
type Pattern struct {
	expr string
	re   func() *regexp.Regexp
}

func pattern(expr string) *Pattern {
	return &Pattern{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// MatchString reports whether s matches the pattern.
func (p *Pattern) MatchString(s string) bool { return p.re().MatchString(s) }

// String returns the pattern's regular expression.
func (p *Pattern) String() string { return p.expr }

// table is every key of a pipeline file but the connectors' options, in
// the order of docs/dsl.md: a section comes before its keys.
var table = []*Setting{
	// The pipeline.
	{Path: "version", Scope: Pipeline, Kind: Int, Min: 1, Values: []string{"1"}, Required: true, Static: true,
		Help: "the version of the pipeline format; read first"},
	{Path: "name", Scope: Pipeline, Kind: Name, Pattern: pipelineName, PatternDoc: "lowercase letters, digits and dashes, starting with a letter, at most 64 (it names the program)", Required: true, Static: true,
		Help: "the pipeline's name: names the program and its log lines"},
	{Path: "package", Scope: Pipeline, Kind: String, Default: ".", Static: true,
		Help: "the Go package with the pipeline's types and functions: a directory relative to the pipeline file, or an import path"},
	{Path: "parallelism", Scope: Pipeline, Kind: Int, Min: 1, Max: MaxParallelism, Default: "1",
		Help: "subtasks of every node without a parallelism of its own"},
	{Path: "max-parallelism", Scope: Pipeline, Kind: Int, Min: 1, Max: MaxParallelism, Default: "128",
		Help: "number of key groups, at least the parallelism of every keyed node; fixed for the life of the state"},

	{Path: "checkpoint", Scope: Pipeline, Kind: Mapping, Help: "when and where the job takes checkpoints"},
	{Path: "checkpoint.mode", Scope: Pipeline, Kind: Enum, Values: []string{"exactly-once", "at-least-once", "none"}, Default: "exactly-once",
		Help: "exactly-once aligns checkpoint barriers, at-least-once does not, none takes no checkpoints"},
	{Path: "checkpoint.interval", Scope: Pipeline, Kind: Duration, MinDuration: time.Nanosecond, Default: "10s",
		Hint: &Hint{Format: "to turn checkpoints off, use %s", Path: "checkpoint.mode", Value: "none"},
		Help: "time between checkpoints"},
	{Path: "checkpoint.timeout", Scope: Pipeline, Kind: Duration, MinDuration: time.Nanosecond, Default: "10m",
		Help: "a checkpoint not complete by then is given up"},
	{Path: "checkpoint.min-pause", Scope: Pipeline, Kind: Duration, Default: "0",
		Help: "least time between the end of a checkpoint and the start of the next"},
	{Path: "checkpoint.retain", Scope: Pipeline, Kind: Int, Min: 1, Default: "3",
		Help: "completed checkpoints kept"},
	{Path: "checkpoint.dir", Scope: Pipeline, Kind: String, Default: "checkpoints",
		Help: "where checkpoints are kept (run --checkpoint-dir overrides it)"},

	{Path: "restart", Scope: Pipeline, Kind: Mapping, Help: "what the program does when the job fails: restart it from its newest checkpoint, or give up"},
	{Path: "restart.strategy", Scope: Pipeline, Kind: Enum, Values: []string{"fixed-delay", "failure-rate", "exponential-backoff", "none"}, Default: "fixed-delay",
		Help: "how failures are restarted"},
	{Path: "restart.attempts", Scope: Pipeline, Kind: Int, Min: 0, Default: "3",
		Help: "restarts allowed by fixed-delay and exponential-backoff; 0 for no limit"},
	{Path: "restart.delay", Scope: Pipeline, Kind: Duration, Default: "1s",
		Help: "wait before a restart (the first one, for exponential-backoff)"},
	{Path: "restart.max-delay", Scope: Pipeline, Kind: Duration, Default: "1m",
		Help: "exponential-backoff: longest wait"},
	{Path: "restart.multiplier", Scope: Pipeline, Kind: Float, Min: 1, Default: "2",
		Help: "exponential-backoff: growth of the wait per failure"},
	{Path: "restart.max-failures", Scope: Pipeline, Kind: Int, Min: 0, Default: "3",
		Help: "failure-rate: failures within restart.interval before giving up; 0 gives up at the first"},
	{Path: "restart.interval", Scope: Pipeline, Kind: Duration, Default: "1m",
		Help: "failure-rate: the window failures are counted in"},

	{Path: "state", Scope: Pipeline, Kind: Mapping, Help: "where keyed state is kept"},
	{Path: "state.backend", Scope: Pipeline, Kind: Enum, Values: []string{"memory", "pebble"}, Default: "memory", Static: true,
		Help: "where reduce, aggregate and process keep their keyed state: memory (a Go map), or pebble (a Pebble store on disk, for state larger than memory)"},

	{Path: "sources", Scope: Pipeline, Kind: Nodes, Nodes: Source, Required: true, Static: true, Help: "the nodes that read records"},
	{Path: "operators", Scope: Pipeline, Kind: Nodes, Nodes: Operator, Static: true, Help: "the nodes that transform records"},
	{Path: "sinks", Scope: Pipeline, Kind: Nodes, Nodes: Sink, Required: true, Static: true, Help: "the nodes that write records"},

	// Every node.
	{Path: "name", Scope: AnyNode, Kind: Name, Pattern: nodeName, PatternDoc: "letters, digits, '_' and '-', starting with a letter or '_', at most 64 ('.' is kept for side outputs such as counts.late)", Required: true, Static: true,
		Help: "the node's name, unique in the pipeline"},
	{Path: "uid", Scope: AnyNode, Kind: Name, Pattern: nodeUID, PatternDoc: "letters, digits, '_', '-' and '.', starting with a letter, digit or '_', at most 64 (it names the node's files in checkpoints)", DefaultDoc: "the node's name", Static: true,
		Help: "the identity of the node's state across versions of the pipeline; unique"},
	{Path: "parallelism", Scope: AnyNode, Kind: Int, Min: 1, Max: MaxParallelism, DefaultDoc: "its input's for a map, filter, flatmap or sink (fused behind it), else the pipeline's parallelism",
		Help: "subtasks of the node"},
	{Path: "input", Scope: Operator | Sink, Kind: NodeRef, Pattern: nodeRef, PatternDoc: "a node's name, or a side output: NODE.late, SOURCE.dead-letter", Static: true,
		Help: "the node the records come from (NODE.late: the records too late for NODE's windows; SOURCE.dead-letter: a file or Kafka source's malformed records)"},
	{Path: "inputs", Scope: Operator, Kind: NodeRef, List: true, Pattern: nodeRef, PatternDoc: "a node's name, or a side output: NODE.late, SOURCE.dead-letter", Static: true,
		Help: "the nodes the records come from, for union and join (or any operator, with one item)"},
	{Path: "connector", Scope: Source, Kind: Enum, Values: []string{"file", "generator", "kafka"}, Required: true, Static: true,
		Help: "what reads the records; its options are keys of the node"},
	{Path: "connector", Scope: Sink, Kind: Enum, Values: []string{"file", "stdout", "kafka"}, Required: true, Static: true,
		Help: "what writes the records; its options are keys of the node"},

	// Sources.
	{Path: "timestamps", Scope: Source, Kind: Mapping, Static: true, Help: "the records' event time and the source's watermarks"},
	{Path: "timestamps.extract", Scope: Source, Kind: Func, DefaultDoc: "required, but for a Kafka source: its records' Kafka timestamps", Static: true,
		Help: "func(T) time.Time, or func(T) int64 in Unix milliseconds: a record's event time"},
	{Path: "timestamps.max-out-of-orderness", Scope: Source, Kind: Duration, Default: "0", Static: true,
		Help: "how far behind the newest event time a record may arrive without being late"},
	{Path: "timestamps.idle-timeout", Scope: Source, Kind: Duration, Default: "0", Static: true,
		Help: "a subtask without records for this long stops holding the watermark back; 0 is off"},
	{Path: "timestamps.max-drift", Scope: Source, Kind: Duration, Default: "0", Static: true,
		Help: "a file or Kafka source's subtask whose watermark is this far ahead of the slowest of the others stops reading until they catch up, as does a Kafka partition this far ahead of the source's slowest (watermark alignment), which bounds what waits in keyed state downstream; 0 is off"},
	{Path: "timestamps.align-group", Scope: Source, Kind: String, Static: true,
		Help: "sources with the same align-group keep pace with each other, each within its own max-drift of the slowest subtask of them all (the two inputs of a join, say); needs max-drift; empty: the source keeps pace with itself only"},

	// Operators: the kinds, then the keys of some kinds.
	{Path: "map", Scope: Operator, Kind: Func, Kinds: []string{"map"}, Static: true,
		Help: "func(In) Out or func(In) (Out, error): one record out per record in"},
	{Path: "filter", Scope: Operator, Kind: Func, Kinds: []string{"filter"}, Static: true,
		Help: "func(In) bool: keeps the records it returns true for"},
	{Path: "flatmap", Scope: Operator, Kind: Func, Kinds: []string{"flatmap"}, Static: true,
		Help: "func(In, func(Out)) or func(In) []Out: any number of records out per record in"},
	{Path: "reduce", Scope: Operator, Kind: Func, Kinds: []string{"reduce"}, Static: true,
		Help: "func(acc, in In) In: folds each key's records into one"},
	{Path: "aggregate", Scope: Operator, Kind: Mapping, Kinds: []string{"aggregate"}, Static: true,
		Help: "adds each key's records into an accumulator"},
	{Path: "aggregate.add", Scope: Operator, Kind: Func, Kinds: []string{"aggregate"}, Required: true, Static: true,
		Help: "func(acc *Acc, in In): adds a record to its key's accumulator"},
	{Path: "aggregate.result", Scope: Operator, Kind: Func, Kinds: []string{"aggregate"}, Static: true,
		Help: "func(key K, acc *Acc) Out, or on a window func(key K, w pipegen.Window, acc *Acc) Out; without it the accumulator is emitted"},
	{Path: "aggregate.merge", Scope: Operator, Kind: Func, Kinds: []string{"aggregate"}, Static: true,
		Help: "func(dst, src *Acc): merges two sessions' accumulators; session windows only"},
	{Path: "process", Scope: Operator, Kind: Func, OrList: true, Len: 2, Kinds: []string{"process"}, Static: true,
		Help: "func(key K, state *S, in In, ctx pipegen.Context, emit func(Out)): per-key state, timers and side outputs; with two inputs a list, a function per input"},
	{Path: "join", Scope: Operator, Kind: Mapping, Kinds: []string{"join"}, Static: true,
		Help: "pairs the records of two inputs with equal keys, within a window or an interval"},
	{Path: "join.apply", Scope: Operator, Kind: Func, Kinds: []string{"join"}, Required: true, Static: true,
		Help: "func(L, R) Out: makes a record of a pair"},
	{Path: "join.between", Scope: Operator, Kind: Duration, List: true, Len: 2, Signed: true, Kinds: []string{"join"}, Static: true,
		Help: "[LOWER, UPPER]: an interval join pairs a right record whose event time is within these bounds of the left one's"},
	{Path: "join.exclusive", Scope: Operator, Kind: Enum, Values: []string{"none", "lower", "upper", "both"}, Default: "none", Kinds: []string{"join"}, Static: true,
		Help: "which bounds of between a right record's time may not equal: none (both included), lower, upper or both"},
	{Path: "union", Scope: Operator, Kind: Bool, Values: []string{"true"}, Kinds: []string{"union"}, Static: true,
		Help: "merges two or more inputs of the same type, listed under inputs"},
	{Path: "key", Scope: Operator, Kind: Func, Kinds: []string{"reduce", "aggregate"}, Static: true,
		Help: "func(In) K: the key the node keeps its state by"},
	{Path: "key", Scope: Operator, Kind: Func, OrList: true, Len: 2, Kinds: []string{"process"}, Static: true,
		Help: "func(In) K: the key the node keeps its state and timers by; with two inputs a list, a key function per input, returning the same type"},
	{Path: "key", Scope: Operator, Kind: Func, List: true, Len: 2, Kinds: []string{"join"}, Static: true,
		Help: "[LeftKey, RightKey]: the key function of each input, returning the same type"},
	{Path: "window", Scope: Operator, Kind: Mapping, Kinds: []string{"reduce", "aggregate", "join"}, Static: true,
		Help: "windows of event or processing time; exactly one of tumbling, sliding (with every) and session"},
	{Path: "window.tumbling", Scope: Operator, Kind: Duration, MinDuration: time.Millisecond, Kinds: []string{"reduce", "aggregate", "join"}, Static: true,
		Help: "the size of windows that follow each other"},
	{Path: "window.sliding", Scope: Operator, Kind: Duration, MinDuration: time.Millisecond, Kinds: []string{"reduce", "aggregate", "join"}, Static: true,
		Help: "the size of windows that overlap; every says how often one starts"},
	{Path: "window.every", Scope: Operator, Kind: Duration, MinDuration: time.Millisecond, Kinds: []string{"reduce", "aggregate", "join"}, Static: true,
		Help: "how often a sliding window starts, at most its size"},
	{Path: "window.session", Scope: Operator, Kind: Duration, MinDuration: time.Millisecond, Kinds: []string{"reduce", "aggregate", "join"}, Static: true,
		Help: "the gap without records that closes a key's session"},
	{Path: "window.count", Scope: Operator, Kind: Int, Min: 1, Kinds: []string{"reduce", "aggregate"}, Static: true,
		Help: "count windows: every this many records of a key, in arrival order, form a window"},
	{Path: "window.count-every", Scope: Operator, Kind: Int, Min: 1, Kinds: []string{"reduce", "aggregate"}, Static: true,
		Help: "sliding count windows: every this many records of a key, a window of its last count records fires (at most count)"},
	{Path: "window.session-gap", Scope: Operator, Kind: Func, Kinds: []string{"reduce", "aggregate"}, Static: true,
		Help: "func(In) time.Duration: session windows whose gap each record sets: the record's session is [its time, its time + the gap)"},
	{Path: "window.time", Scope: Operator, Kind: Enum, Values: []string{"event", "processing"}, DefaultDoc: "event when the records have event time, else processing", Kinds: []string{"reduce", "aggregate", "join"}, Static: true,
		Help: "the time windows are measured in"},
	{Path: "trigger", Scope: Operator, Kind: Mapping, Kinds: []string{"aggregate"}, Static: true,
		Help: "early firings of a window, before it closes: every count records of a key's window, or every interval of time"},
	{Path: "trigger.count", Scope: Operator, Kind: Int, Min: 1, Kinds: []string{"aggregate"}, Static: true,
		Help: "fire a key's window early after every count records added since it last fired"},
	{Path: "trigger.every", Scope: Operator, Kind: Duration, MinDuration: time.Millisecond, Kinds: []string{"aggregate"}, Static: true,
		Help: "fire early, at every multiple of this much time, the windows that got records since they last fired"},
	{Path: "trigger.time", Scope: Operator, Kind: Enum, Values: []string{"event", "processing"}, DefaultDoc: "the window's time", Kinds: []string{"aggregate"}, Static: true,
		Help: "the time trigger.every is measured in: the watermark (event) or the wall clock (processing)"},
	{Path: "trigger.mode", Scope: Operator, Kind: Enum, Values: []string{"accumulate", "discard"}, Default: "accumulate", Kinds: []string{"aggregate"}, Static: true,
		Help: "accumulate: each result holds every record of the window so far; discard: only those since the previous result"},
	{Path: "allowed-lateness", Scope: Operator, Kind: Duration, Default: "0", Kinds: []string{"reduce", "aggregate", "join"}, Static: true,
		Help: "event-time windows: how long after it fires a window still takes late records"},
	{Path: "state-ttl", Scope: Operator, Kind: Duration, MinDuration: time.Millisecond, DefaultDoc: "none: state is kept until the function clears it", Kinds: []string{"reduce", "aggregate", "process"}, Static: true,
		Help: "without a window: a key's state (and each entry of a process's map state) expires this long after its last write, in processing time; an expired value is never read again and is deleted"},
	{Path: "emit", Scope: Operator, Kind: Enum, Values: []string{"update", "final"}, Default: "update", Kinds: []string{"reduce", "aggregate"}, Static: true,
		Help: "without a window: a result after every record (update), or one per key when the input ends (final)"},
	{Path: "broadcast", Scope: Operator, Kind: NodeRef, Pattern: nodeRef, PatternDoc: "one of the node's two inputs", Kinds: []string{"process"}, Static: true,
		Help: "the input of a process with two inputs that every subtask receives: its function writes the broadcast state, a map the same on every subtask, which the keyed input's function reads"},
	{Path: "on-timer", Scope: Operator, Kind: Func, Kinds: []string{"process"}, Static: true,
		Help: "func(key K, state *S, at time.Time, ctx pipegen.Context, emit func(Out)): runs for each due timer"},
}

// connectors are the built-in connectors.
var connectors = []*Connector{
	{
		Name: "file", Scope: Source, Rescalable: true,
		Help: "reads a file, or every file of a directory or glob (sorted by name, spread over the subtasks)",
		Options: []*Setting{
			{Path: "path", Kind: String, Required: true, Help: "file, directory or glob pattern; relative paths resolve against the working directory of the running program"},
			{Path: "format", Kind: Enum, Values: []string{"lines", "jsonl", "csv"}, Default: "lines", Static: true, Help: "lines gives strings; jsonl and csv decode into `type`"},
			{Path: "type", Kind: Type, Static: true, Help: "record type for jsonl and csv, a type of the pipeline's package"},
			{Path: "on-error", Kind: Enum, Values: []string{"fail", "skip", "dead-letter"}, Default: "fail", Help: "what a malformed record does: fail the job, skip it and count it, or send it with its file, line and error to the side output NAME.dead-letter"},
			{Path: "header", Kind: Bool, Default: "true", Formats: []string{"csv"}, Help: "csv: the first line names the columns (matched to field names or `csv` tags); without it columns map to fields in order"},
			{Path: "delimiter", Kind: Char, Default: ",", Formats: []string{"csv"}, Help: "csv: the field separator, one character"},
			{Path: "strict", Kind: Bool, Default: "false", Formats: []string{"jsonl", "csv"}, Help: "every field of the record type must be in every record, and nothing else: an unknown or missing field (or a JSON line that is not an object) is a malformed record"},
		},
	},
	{
		Name: "generator", Scope: Source, Rescalable: true,
		Help: "calls a function of the pipeline's package for each sequence number; spread over the subtasks in blocks of consecutive numbers that double from 1 to 16384 (at parallelism 1, every number in order)",
		Options: []*Setting{
			{Path: "generate", Kind: Func, Required: true, Static: true, Help: "func(seq uint64) (T, bool): the record for seq, false once there are no more (for every later seq too); or func(seq uint64, into *T) bool, which writes the record into *into, a zero T"},
			{Path: "rate", Kind: Float, Min: 0, Default: "0", Help: "records per second per subtask; 0 for as fast as possible"},
		},
	},
	{
		Name: "kafka", Scope: Source, Rescalable: true,
		Help: "reads the partitions of Kafka topics, shared out over the subtasks, with their offsets in every checkpoint",
		Options: append(kafkaClient(),
			&Setting{Path: "topic", Kind: String, Required: true, Help: "the topic to read, or several separated by commas"},
			&Setting{Path: "start", Kind: String, Default: "earliest", Help: "where a fresh start begins: earliest, latest, group (the committed offsets of group) or a time (RFC 3339); a restored job resumes at its checkpoint's offsets"},
			&Setting{Path: "bounded", Kind: Enum, Values: []string{"none", "latest"}, Default: "none", Help: "latest: stop at the offsets that were the newest when the job started (a backfill, a test); none: read until stopped"},
			&Setting{Path: "group", Kind: String, Help: "a consumer group: for start: group, and for commit-offsets"},
			&Setting{Path: "commit-offsets", Kind: Bool, Default: "false", Help: "commit each completed checkpoint's offsets to group, for tools that watch its lag (the job never reads them back)"},
			&Setting{Path: "isolation", Kind: Enum, Values: []string{"read-committed", "read-uncommitted"}, Default: "read-committed", Help: "read-committed skips the records of aborted and open transactions"},
			&Setting{Path: "discovery-interval", Kind: Duration, Default: "30s", Help: "how often an unbounded source looks for partitions added to its topics (read from their start); 0 is off"},
			&Setting{Path: "format", Kind: Enum, Values: []string{"lines", "jsonl", "csv", "raw"}, Default: "lines", Static: true, Help: "how a message's value is read: lines gives a string, jsonl and csv decode into `type`, raw gives []byte"},
			&Setting{Path: "type", Kind: Type, Static: true, Help: "record type for jsonl and csv, a type of the pipeline's package"},
			&Setting{Path: "delimiter", Kind: Char, Default: ",", Formats: []string{"csv"}, Help: "csv: the field separator, one character (the columns map to the fields in order)"},
			&Setting{Path: "on-error", Kind: Enum, Values: []string{"fail", "skip", "dead-letter"}, Default: "fail", Help: "what a malformed record does: fail the job, skip it and count it, or send it with its topic, partition, offset and error to the side output NAME.dead-letter"},
		),
	},
	{
		Name: "file", Scope: Sink,
		Help: "writes part files into a directory, committed with the checkpoints",
		Options: []*Setting{
			{Path: "path", Kind: String, Required: true, Help: "output directory; relative paths resolve against the working directory of the running program"},
			{Path: "format", Kind: Enum, Values: []string{"lines", "jsonl", "csv"}, DefaultDoc: "lines for string records, else jsonl", Static: true, Help: "lines for string or fmt.Stringer records, jsonl for any, csv for a struct of strings, numbers, bools, times and durations"},
			{Path: "header", Kind: Bool, Default: "true", Formats: []string{"csv"}, Help: "csv: each part file starts with a line of the column names (the fields' `csv` tags or names), which a csv file source with header true reads"},
			{Path: "delimiter", Kind: Char, Default: ",", Formats: []string{"csv"}, Help: "csv: the field separator, one character"},
		},
	},
	{
		Name: "stdout", Scope: Sink,
		Help: "prints records on standard output, one per line",
		Options: []*Setting{
			{Path: "format", Kind: Enum, Values: []string{"lines", "jsonl", "csv"}, DefaultDoc: "lines for string and fmt.Stringer records, else jsonl", Static: true, Help: "lines for string or fmt.Stringer records, jsonl for any, csv for a struct of strings, numbers, bools, times and durations (no header line)"},
			{Path: "delimiter", Kind: Char, Default: ",", Formats: []string{"csv"}, Help: "csv: the field separator, one character"},
		},
	},
	{
		Name: "kafka", Scope: Sink,
		Help: "writes to a Kafka topic; exactly-once with Kafka transactions committed with the checkpoints",
		Options: append(kafkaClient(),
			&Setting{Path: "topic", Kind: String, Required: true, Help: "the topic to write"},
			&Setting{Path: "format", Kind: Enum, Values: []string{"lines", "jsonl", "csv", "raw"}, DefaultDoc: "lines for string records, raw for []byte, else jsonl", Static: true, Help: "how a record becomes a message's value: lines for string or fmt.Stringer records, jsonl for any, csv (one line, no header) for a struct of strings, numbers, bools, times and durations, raw for []byte"},
			&Setting{Path: "delimiter", Kind: Char, Default: ",", Formats: []string{"csv"}, Help: "csv: the field separator, one character (the columns are the fields in order)"},
			&Setting{Path: "key", Kind: Func, Static: true, Help: "func(T) K, K a string, []byte or integer: the message's key, which picks its partition; without it, the key function of a reduce that feeds the sink, else no key"},
			&Setting{Path: "transactional-id", Kind: String, DefaultDoc: "pipegen-NAME-SINK, NAME the pipeline's", Help: "exactly-once: the prefix of the sink's transactional ids (PREFIX-SUB-SLOT), unique to this job on the cluster"},
			&Setting{Path: "transaction-timeout", Kind: Duration, MinDuration: time.Millisecond, Default: "15m", Help: "exactly-once: how long the broker keeps a transaction open before it aborts it; at most the broker's transaction.max.timeout.ms, and longer than a checkpoint and a recovery take"},
		),
	},
}

// kafkaClient are the options of every Kafka connector: where the
// cluster is and how to sign in. A password is never written in the
// pipeline: sasl-password-env names the environment variable that holds
// it.
func kafkaClient() []*Setting {
	return []*Setting{
		{Path: "brokers", Kind: String, Required: true, Help: "the cluster's bootstrap brokers, host:port, separated by commas"},
		{Path: "sasl-mechanism", Kind: Enum, Values: []string{"none", "plain", "scram-sha-256", "scram-sha-512"}, Default: "none", Help: "how the client signs in"},
		{Path: "sasl-user", Kind: String, Help: "the user to sign in as"},
		{Path: "sasl-password-env", Kind: String, Help: "the environment variable that holds the password"},
		{Path: "tls", Kind: Bool, Default: "false", Help: "connect with TLS (set by tls-ca and tls-cert too)"},
		{Path: "tls-ca", Kind: String, Help: "a PEM file of the certificate authorities to trust (default: the system's)"},
		{Path: "tls-cert", Kind: String, Help: "a PEM file of the client's certificate, with tls-key"},
		{Path: "tls-key", Kind: String, Help: "a PEM file of the client certificate's key"},
	}
}

func init() {
	for _, c := range connectors {
		for _, o := range c.Options {
			o.Scope = c.Scope
		}
	}
}
