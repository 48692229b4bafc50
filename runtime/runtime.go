package runtime

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/cli"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector/file"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/connector/generator"
	"github.com/pipegen/pipegen/runtime/internal/connector/stdout"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/stream"
	"github.com/pipegen/pipegen/runtime/state"
)

// The command line (package cli).

// Program is what a generated main package hands to Main: the compiled
// settings and the function that wires a run of the job.
type Program = cli.Program

// Main is the generated program's command line. It never returns.
func Main(p Program) { cli.Main(p) }

// Run is the same command line for a pipeline generated into the user's
// package: args are the arguments without the program's name, and Run
// returns the exit status (0 done, 1 failed, 2 wrong command line).
func Run(p Program, args []string) int { return cli.Run(p, args) }

// Settings (package config).

type (
	Config           = config.Config
	CheckpointConfig = config.CheckpointConfig
	RestartConfig    = config.RestartConfig
	NodeConfig       = config.NodeConfig
	NodeInput        = config.NodeInput
	WatermarkConfig  = config.WatermarkConfig
)

// A run of the job (package job) and its checkpoint side (package
// checkpoint).

type (
	Job       = job.Job
	Task      = checkpoint.Task
	Snapshot  = checkpoint.Snapshot
	SourceCtl = checkpoint.SourceCtl
	// Meter is the metrics of one chain subtask: generated code counts
	// records in an array of its own and publishes them here.
	Meter = metrics.Chain
)

// SnapshotMemory captures keyed state held in memory: the writer encodes
// what changed since the newest completed checkpoint while the subtask
// goes on.
func SnapshotMemory[K comparable, V any](s *Snapshot, node int, st *state.Memory[K, V], c *state.Codec[K, V]) {
	checkpoint.SnapshotMemory(s, node, st, c)
}

// RestoreMemory binds keyed state held in memory to the task's key groups
// and fills it from the checkpoint the job resumes from.
func RestoreMemory[K comparable, V any](t *Task, node int, st *state.Memory[K, V], c *state.Codec[K, V]) {
	checkpoint.RestoreMemory(t, node, st, c)
}

// SnapshotMemoryState captures the named state of node held in memory
// ("map.F": the map state of field F of a process's state).
func SnapshotMemoryState[K comparable, V any](s *Snapshot, node int, name string, st *state.Memory[K, V], c *state.Codec[K, V]) {
	checkpoint.SnapshotMemoryState(s, node, name, st, c)
}

// RestoreMemoryState binds the named state of node held in memory to the
// task's key groups and fills it from the checkpoint the job resumes from.
func RestoreMemoryState[K comparable, V any](t *Task, node int, name string, st *state.Memory[K, V], c *state.Codec[K, V]) {
	checkpoint.RestoreMemoryState(t, node, name, st, c)
}

// SnapshotKeyed captures keyed state of any shape that writes itself into
// key-group sections.
func SnapshotKeyed[K comparable](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, write func(sec *state.Sections, keyGroup func(K) int) error) {
	checkpoint.SnapshotKeyed(s, node, name, hash, keySchema, valueSchema, write)
}

// RestoreKeyed hands to read the sections of the key groups the task's
// subtask owns in the named state of node.
func RestoreKeyed(t *Task, node int, name string, read func(section []byte) error) {
	checkpoint.RestoreKeyed(t, node, name, read)
}

// SnapshotChanges captures keyed state that writes itself into key-group
// sections, whole or as a delta of what changed since the newest
// completed checkpoint (timers; windows use SnapshotWindows), encoded at
// the barrier.
func SnapshotChanges[K comparable](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, st checkpoint.Changes, write func(sec *state.Sections, keyGroup func(K) int, d Delta) (uint64, error)) {
	checkpoint.SnapshotChanges(s, node, name, hash, keySchema, valueSchema, st, write)
}

// SnapshotWindows captures the tumbling or sliding windows of a window
// operator, whole or as a delta, as SnapshotChanges does: when their keys
// and accumulators hold no pointers (WindowState.CanCapture) the barrier
// only records the panes copy on write and the checkpoint writer encodes
// them, so that the subtask's stall does not grow with the windows;
// otherwise they are encoded at the barrier.
func SnapshotWindows[K comparable, A any](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, st *WindowState[K, A],
	encK func(*codec.Writer, K), encA func(*codec.Writer, *A)) {
	if !st.CanCapture() {
		checkpoint.SnapshotChanges(s, node, name, hash, keySchema, valueSchema, st, func(sec *state.Sections, kg func(K) int, d Delta) (uint64, error) {
			return st.SnapshotDelta(sec, kg, encK, encA, d)
		})
		return
	}
	checkpoint.CaptureChanges(s, node, name, hash, keySchema, valueSchema, st, func(d Delta) (uint64, func(*state.Sections, func(K) int) error, error) {
		c, epoch, err := st.Capture(d)
		if err != nil {
			return 0, nil, err
		}
		return epoch, func(sec *state.Sections, kg func(K) int) error {
			err := c.Encode(sec, kg, encK, encA)
			c.Release()
			return err
		}, nil
	})
}

// RestoreChanges hands to read the sections of the key groups the task's
// subtask owns in the named state of node, full ones and deltas, as
// SnapshotChanges wrote them.
func RestoreChanges(t *Task, node int, name string, st checkpoint.Changes, read func(section []byte, delta bool) error) {
	checkpoint.RestoreChanges(t, node, name, st, read)
}

// SnapshotBroadcast captures a node's broadcast state, once: on subtask 0.
func SnapshotBroadcast(s *Snapshot, node int, name, keySchema, valueSchema string, write func(w *codec.Writer) error) {
	checkpoint.SnapshotBroadcast(s, node, name, keySchema, valueSchema, write)
}

// RestoreBroadcast hands to read the one copy of a node's broadcast state,
// on every subtask.
func RestoreBroadcast(t *Task, node int, name string, read func(section []byte) error) {
	checkpoint.RestoreBroadcast(t, node, name, read)
}

// Failures (package fault).

// Abort stops the calling subtask with err.
func Abort(err error) { fault.Abort(err) }

// Abortf is Abort with a formatted error.
func Abortf(format string, args ...any) { fault.Abort(fmt.Errorf(format, args...)) }

// PanicWithRecord panics again with p annotated with the record being
// processed.
func PanicWithRecord[T any](p any, rec T) { fault.PanicWithRecord(p, rec) }

// InChain annotates panic p with the chain it happened in, head node and
// subtask sub, when it names none yet: the sender of a chain that takes
// its records by calls names it.
func InChain(p any, node string, sub int) any { return fault.InChain(p, node, sub) }

// The data plane (package stream).

type (
	Msg[T any]        = stream.Msg[T]
	MsgKind           = stream.MsgKind
	Inbox[T any]      = stream.Inbox[T]
	Out[T any]        = stream.Out[T]
	Pair[L, R any]    = stream.Pair[L, R]
	PairMsg[L, R any] = stream.PairMsg[L, R]
	Timed[T any]      = stream.Timed[T]
)

// The message kinds.
const (
	Records   = stream.Records
	Barrier   = stream.Barrier
	Watermark = stream.Watermark
	End       = stream.End
	Idle      = stream.Idle
	Tick      = stream.Tick
)

// The bounds of event time, and how often partial batches move on.
const (
	MinTime = stream.MinTime
	MaxTime = stream.MaxTime
	Linger  = stream.Linger
)

// NewInboxes makes the inboxes of a node's subtasks.
func NewInboxes[T any](j *Job, receivers, senders int) []*Inbox[T] {
	return stream.NewInboxes[T](j, receivers, senders)
}

// NewOut makes the output of sender from towards the inboxes to.
func NewOut[T any](j *Job, to []*Inbox[T], from int) *Out[T] { return stream.NewOut(j, to, from) }

// NewPair reads the inboxes of one join subtask.
func NewPair[L, R any](left *Inbox[L], right *Inbox[R]) *Pair[L, R] {
	return stream.NewPair(left, right)
}

// Key hashing (package keygroup): generated code picks the function by the
// key's type and combines the fields of struct and array keys.

// HashString hashes a string key.
func HashString(s string) uint64 { return keygroup.HashString(s) }

// HashBytes hashes a []byte key.
func HashBytes(b []byte) uint64 { return keygroup.HashBytes(b) }

// HashUint64 hashes an integer key of any width.
func HashUint64(x uint64) uint64 { return keygroup.HashUint64(x) }

// HashInt64 hashes a signed integer key.
func HashInt64(x int64) uint64 { return keygroup.HashInt64(x) }

// HashFloat64 hashes a float key.
func HashFloat64(f float64) uint64 { return keygroup.HashFloat64(f) }

// HashBool hashes a bool key.
func HashBool(b bool) uint64 { return keygroup.HashBool(b) }

// HashCombine folds the hash of one more field into h.
func HashCombine(h, field uint64) uint64 { return keygroup.HashCombine(h, field) }

// Event time (package eventtime).

type (
	Window                               = eventtime.Window
	WindowKind                           = eventtime.WindowKind
	WindowAssigner                       = eventtime.WindowAssigner
	WindowState[K comparable, A any]     = eventtime.WindowState[K, A]
	IntervalJoin[K comparable, L, R any] = eventtime.IntervalJoin[K, L, R]
	WindowJoin[K comparable, L, R any]   = eventtime.WindowJoin[K, L, R]
	TimerService[K comparable]           = eventtime.TimerService[K]
	Delta                                = eventtime.Delta
	Timers[K comparable]                 = eventtime.Timers[K]
	ProcessContext[K comparable]         = eventtime.ProcessContext[K]
	ReduceAcc[T any]                     = eventtime.ReduceAcc[T]
	Watermarks                           = eventtime.Watermarks
)

// The window kinds.
const (
	Tumbling = eventtime.Tumbling
	Sliding  = eventtime.Sliding
	Session  = eventtime.Session
)

// NewWindowState makes the open windows of a keyed window operator.
func NewWindowState[K comparable, A any](a WindowAssigner, lateness int64, merge func(dst, src *A)) *WindowState[K, A] {
	return eventtime.NewWindowState[K](a, lateness, merge)
}

// NewSlicedWindows makes the open windows of a keyed operator on sliding
// windows with a merge function and no allowed lateness, kept in slices
// of the slide when they allow it (docs/eventtime.md, Sliding windows in
// slices).
func NewSlicedWindows[K comparable, A any](a WindowAssigner, merge func(dst, src *A)) *WindowState[K, A] {
	return eventtime.NewSlicedWindows[K](a, merge)
}

// NewIntervalJoin makes an interval join's buffers.
func NewIntervalJoin[K comparable, L, R any](lower, upper int64) *IntervalJoin[K, L, R] {
	return eventtime.NewIntervalJoin[K, L, R](lower, upper)
}

// NewWindowJoin makes a window join's buffers.
func NewWindowJoin[K comparable, L, R any](a WindowAssigner, lateness int64) *WindowJoin[K, L, R] {
	return eventtime.NewWindowJoin[K, L, R](a, lateness)
}

// NewTimerService makes the timers of a process operator's subtask.
func NewTimerService[K comparable]() *TimerService[K] { return eventtime.NewTimerService[K]() }

// NewProcessContext makes the context of a subtask of a process operator.
func NewProcessContext[K comparable](name string, timers Timers[K], onTimer, timed bool) *ProcessContext[K] {
	return eventtime.NewProcessContext(name, timers, onTimer, timed)
}

// NewWatermarks makes the watermark generator of a source subtask, as the
// checkpoint the job resumes from left it.
func NewWatermarks(t *Task, node int) *Watermarks {
	g := eventtime.NewWatermarks(t.Node(node).Watermark)
	t.RestoreGenerator(node, g)
	return g
}

// MergeReduce returns the merge of two reduce accumulators with f.
func MergeReduce[T any](f func(acc, in T) T) func(dst, src *ReduceAcc[T]) {
	return eventtime.MergeReduce(f)
}

// UserWindow is the window a result function sees.
func UserWindow(w Window) pipegen.Window { return eventtime.UserWindow(w) }

// NowMillis is processing time in Unix milliseconds.
func NowMillis() int64 { return eventtime.NowMillis() }

// TimeMillis converts an event time to Unix milliseconds.
func TimeMillis(t time.Time) int64 { return eventtime.TimeMillis(t) }

// MillisTime converts Unix milliseconds to a time in UTC.
func MillisTime(ms int64) time.Time { return eventtime.MillisTime(ms) }

// Connectors (packages file, generator, stdout) and their record formats
// (package format).

type (
	FileSource[T any]      = file.Source[T]
	FileSink[T any]        = file.Sink[T]
	GeneratorSource[T any] = generator.Source[T]
	StdoutSink[T any]      = stdout.Sink[T]
	Format[T any]          = format.Format[T]
	Encoder[T any]         = format.Encoder[T]
)

// NewFileSource prepares subtask sub of the file source node.
func NewFileSource[T any](j *Job, node, sub int, f Format[T]) *FileSource[T] {
	return file.NewSource(j, node, sub, f)
}

// NewFileSink prepares subtask sub of the file sink node; enc may be nil when
// the generated code encodes the records itself (Buf, Wrote).
func NewFileSink[T any](j *Job, node, sub int, enc Encoder[T]) *FileSink[T] {
	return file.NewSink(j, node, sub, enc)
}

// NewGeneratorSource prepares subtask sub of the generator source node.
func NewGeneratorSource[T any](j *Job, node, sub int, fn func(seq uint64) (T, bool)) *GeneratorSource[T] {
	return generator.NewSource(j, node, sub, fn)
}

// NewStdoutSink prepares subtask sub of the stdout sink node; enc may be nil when
// the generated code encodes the records itself (Buf, Wrote).
func NewStdoutSink[T any](j *Job, node, sub int, enc Encoder[T]) *StdoutSink[T] {
	return stdout.NewSink(j, node, sub, enc)
}

// LinesFormat reads every line as a string.
func LinesFormat() Format[string] { return format.LinesFormat() }

// JSONFormat reads one JSON value per line into T.
func JSONFormat[T any]() Format[T] { return format.JSONFormat[T]() }

// JSONFormatFast reads one JSON value per line into T with a generated
// decoder, and with encoding/json the lines that decoder does not handle.
func JSONFormatFast[T any](decode func(line []byte, v *T, strict bool) bool) Format[T] {
	return format.JSONFormatFast(decode)
}

// CSVFormatFor reads CSV into T with the header and delimiter options of
// source node.
func CSVFormatFor[T any](j *Job, node int) Format[T] { return format.CSVFormatFor[T](j.Node(node)) }

// CSVFormatFast is CSVFormatFor with a generated decoder of the cells of
// a line (format.CSVDecodeFunc); the lines it does not handle go through
// the reflective decoder.
func CSVFormatFast[T any](j *Job, node int, decode func(cells [][]byte, cols []int, v *T) bool) Format[T] {
	return format.CSVFormatForFast[T](j.Node(node), decode)
}

// CSVFormat reads CSV into T with delimiter, and a header line when
// header is set, with the generated decode when not nil; for tests of
// generated decoders against the reflective one.
func CSVFormat[T any](delimiter rune, header bool, decode func(cells [][]byte, cols []int, v *T) bool) (Format[T], error) {
	return format.CSVFormatFast(delimiter, header, decode)
}

// CSVEncodeFunc is a generated CSV encoder (format.CSVEncodeFunc).
type CSVEncodeFunc[T any] = format.CSVEncodeFunc[T]

// CSVEncoder writes records as CSV lines with the delimiter option of
// sink node, with the generated encoder fast (nil for none) and the
// reflective one for what fast does not handle.
func CSVEncoder[T any](j *Job, node int, fast CSVEncodeFunc[T]) Encoder[T] {
	return format.CSVEncoderFor[T](j.Node(node), fast).Encode
}

// NewCSVEncoder is the CSV encoder of T with delimiter and the generated
// encoder fast (nil for none), for tests of generated encoders against
// the reflective one.
func NewCSVEncoder[T any](delimiter rune, fast CSVEncodeFunc[T]) (*format.CSVEncoder[T], error) {
	return format.NewCSVEncoder(delimiter, fast)
}

// NewCSVFileSink prepares subtask sub of the csv file sink node: its
// records encoded as NewFileSink's would be with CSVEncoder, and with
// the header option (true unless set to false) each part file starting
// with the header line.
func NewCSVFileSink[T any](j *Job, node, sub int, fast CSVEncodeFunc[T]) *FileSink[T] {
	n := j.Node(node)
	e := format.CSVEncoderFor[T](n, fast)
	s := file.NewSink(j, node, sub, e.Encode)
	header := true
	if h := n.Option("header"); h != "" {
		var err error
		if header, err = strconv.ParseBool(h); err != nil {
			Abortf("sinks.%s: header wants true or false, got %q", n.Name, h)
		}
	}
	if header {
		s.SetHeader(e.Header())
	}
	return s
}

// EncodeString writes a string record as it is.
func EncodeString(dst []byte, v string) ([]byte, error) { return format.EncodeString(dst, v) }

// EncodeStringer writes a record with its String method.
func EncodeStringer[T fmt.Stringer](dst []byte, v T) ([]byte, error) {
	return format.EncodeStringer(dst, v)
}

// EncodeJSON writes a record as one line of JSON.
func EncodeJSON[T any](dst []byte, v T) ([]byte, error) { return format.EncodeJSON(dst, v) }

// Combined edges (Combiner): a sender's partial accumulators for a
// tumbling-window aggregate with a merge function.

// Combiner is the sending side of a combined edge.
type Combiner[K comparable, A any] = eventtime.Combiner[K, A]

// NewCombiner makes the combiner of a sender of a combined edge into
// tumbling windows of assigner a.
func NewCombiner[K comparable, A any](a WindowAssigner) *Combiner[K, A] {
	return eventtime.NewCombiner[K, A](a)
}

// Partial is what crosses a combined edge: one sender's accumulator of key
// Key for the window whose MaxTimestamp is the record's time.
type Partial[K, A any] struct {
	Key K
	Acc A
}
