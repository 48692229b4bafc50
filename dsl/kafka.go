package dsl

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
	"time"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/settings"
)

// checkKafkaSource checks the options of a Kafka source and returns its
// record type: string for lines, []byte for raw, the named type for jsonl
// and csv.
func (r *resolver) checkKafkaSource(n *rnode, conn *settings.Connector, opts map[string]optionValue) types.Type {
	format := opts["format"]
	n.ir.Format = format.V
	r.checkFormatOptions(n, conn, format.V)
	if start, ok := opts["start"]; ok && start.Set {
		if p := kafkaStartProblem(start.V); p != "" {
			r.report(start.Pos, diag.BadValue, "%s", p)
			n.ok = false
		}
	}
	if start := opts["start"]; start.V == "group" {
		if g, ok := opts["group"]; !ok || !g.Set {
			r.report(start.Pos, diag.Missing, "%v starts from the offsets a consumer group committed: name it with %v", ex("start", "group"), ex("group", "NAME"))
			n.ok = false
		}
	}
	if c, ok := opts["commit-offsets"]; ok && c.V == "true" {
		if g, ok := opts["group"]; !ok || !g.Set {
			r.report(c.Pos, diag.Missing, "%v commits offsets to a consumer group: name it with %v", ex("commit-offsets", "true"), ex("group", "NAME"))
			n.ok = false
		}
	}
	typ, hasType := opts["type"]
	switch format.V {
	case "lines", "raw":
		if hasType && typ.Set {
			r.report(typ.Pos, diag.Misplaced, "%v is for the jsonl and csv formats; format %s gives %s", keyRef("type"), format.V, map[string]string{"lines": "strings", "raw": "[]byte"}[format.V])
		}
		if format.V == "raw" {
			return types.NewSlice(types.Universe.Lookup("byte").Type())
		}
		return types.Typ[types.String]
	}
	return r.decodedType(n, format.V, typ, hasType)
}

// kafkaStartProblem says what is wrong with a start position, "" when
// nothing is.
func kafkaStartProblem(v string) string {
	switch v {
	case "earliest", "latest", "group":
		return ""
	}
	if _, err := parseRFC3339(v); err == nil {
		return ""
	}
	return fmt.Sprintf("start wants earliest, latest, group or a time such as 2026-11-29T10:00:00Z, got %q", v)
}

// checkKafkaSink checks a Kafka sink's key function and sets the default
// prefix of its transactional ids, which names the pipeline so that two
// jobs writing to one cluster do not fence each other.
func (r *resolver) checkKafkaSink(n *rnode, in types.Type, opts map[string]optionValue) {
	if _, ok := opts["transactional-id"]; !ok {
		n.ir.Options = append(n.ir.Options, ir.Option{Name: "transactional-id", Value: "pipegen-" + r.spec.Name.V + "-" + n.spec.Name.V})
		sortOptions(n.ir.Options)
	}
	key, ok := opts["key"]
	if !ok || !key.Set {
		r.upstreamKey(n, in)
		return
	}
	f := r.u.lookupFunc(key.Value(), &r.reporter)
	if f == nil {
		n.ok = false
		return
	}
	ps, rs := params(f)
	if ps == nil || ps.Len() != 1 || rs.Len() != 1 || !types.Identical(ps.At(0).Type(), in) {
		r.signatureError(key.Value(), "key", f, fmt.Sprintf("func(%s) K", r.u.typeString(in)))
		n.ok = false
		return
	}
	shape := keyShape(rs.At(0).Type())
	if shape == "" {
		r.report(key.Pos, diag.Type, "key %s returns %s, which cannot be a Kafka message key: return a string, []byte or integer", key.V, r.u.typeString(rs.At(0).Type()))
		n.ok = false
		return
	}
	// No KeyType: a sink keeps no state by its key.
	n.ir.Key = r.fn(f, shape)
}

// upstreamKey gives a Kafka sink without a key function the key of the
// keyed node it reads, when that node's key function takes the sink's
// records (a reduce's): records of one key go to one partition, in order.
func (r *resolver) upstreamKey(n *rnode, in types.Type) {
	if len(n.inputs) != 1 || n.inputs[0].side != "" {
		return
	}
	from := n.inputs[0].from
	if from.ir.Key == nil || len(from.spec.Keys) != 1 {
		return
	}
	f := r.u.lookupFunc(from.spec.Keys[0], &reporter{diags: new(diag.List)})
	if f == nil {
		return
	}
	ps, rs := params(f)
	if ps == nil || ps.Len() != 1 || rs.Len() != 1 {
		return
	}
	ok, ref := recordParam(ps.At(0).Type(), in)
	if !ok {
		return
	}
	if shape := keyShape(rs.At(0).Type()); shape != "" {
		n.ir.Key = r.fnRef(f, shape, ref)
	}
}

// keyShape is how a key of type k becomes a message key: "bytes" for
// strings and []byte, "int" and "uint" for integers written in decimal;
// "" for a type that cannot be one.
func keyShape(k types.Type) string {
	if b, ok := k.Underlying().(*types.Basic); ok {
		switch {
		case b.Info()&types.IsString != 0:
			return "bytes"
		case b.Info()&types.IsInteger != 0 && b.Info()&types.IsUnsigned != 0 && b.Kind() != types.Uintptr:
			return "uint"
		case b.Info()&types.IsInteger != 0 && b.Info()&types.IsUnsigned == 0:
			return "int"
		}
		return ""
	}
	if isBytes(k) {
		return "bytes"
	}
	return ""
}

// isBytes reports whether t is []byte (or a slice type of bytes).
func isBytes(t types.Type) bool {
	s, ok := t.Underlying().(*types.Slice)
	if !ok {
		return false
	}
	b, ok := s.Elem().Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}

func sortOptions(opts []ir.Option) {
	slices.SortFunc(opts, func(a, b ir.Option) int { return strings.Compare(a.Name, b.Name) })
}

func parseRFC3339(v string) (time.Time, error) { return time.Parse(time.RFC3339, v) }

// defaultTransactionTimeout is the Kafka sink's transaction-timeout
// when none is set (the settings table's default).
const defaultTransactionTimeout = 15 * time.Minute

// warnTransactionTimeouts warns about an exactly-once Kafka sink whose
// transactions the broker may abort before their checkpoint commits them:
// a transaction stays open from its first record until the checkpoint
// after it is committed, up to checkpoint.interval + checkpoint.timeout,
// and after a crash until the job has restarted.
func (r *resolver) warnTransactionTimeouts() {
	defer func() { r.nodeName = "" }()
	if value[string](r, "checkpoint.mode") != "exactly-once" {
		return
	}
	interval := value[time.Duration](r, "checkpoint.interval")
	timeout := value[time.Duration](r, "checkpoint.timeout")
	delay := value[time.Duration](r, "restart.delay")
	need := interval + timeout + delay
	for _, n := range r.order {
		if n.ir.Kind != ir.Sink || n.ir.Connector != "kafka" {
			continue
		}
		tt := defaultTransactionTimeout
		pos := n.spec.Name.Pos
		if o, ok := n.spec.Option("transaction-timeout"); ok && o.Value.Set {
			d, err := time.ParseDuration(o.Value.V)
			if err != nil {
				continue // reported
			}
			tt, pos = d, o.Value.Pos
		}
		if tt > need {
			continue
		}
		r.nodeName = n.spec.Name.V
		r.warn(pos, diag.Conflict, "transaction-timeout %s of sink %q is not longer than a transaction may stay open: checkpoint.interval %s + checkpoint.timeout %s + restart.delay %s = %s; the broker aborts a transaction at its timeout, and the records of one that a completed checkpoint holds would be lost: raise transaction-timeout (the broker's transaction.max.timeout.ms caps it, 15m by default), or lower checkpoint.timeout",
			tt, n.spec.Name.V, interval, timeout, delay, need)
	}
}
