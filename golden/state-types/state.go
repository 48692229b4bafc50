// Package statetypes is the golden case of the serializers of checkpointed
// state: an aggregate whose accumulator holds every supported kind of type,
// keyed by a struct, and a reduce over a recursive struct keyed by a named
// string. The source pauses so that a checkpoint completes, and the
// aggregate fails once afterwards: the job restarts from that checkpoint,
// so the output shows the state as it was decoded.
package statetypes

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Event is one record of the input.
type Event struct {
	Region  string    `json:"region"`
	Shard   int       `json:"shard"`
	Sensor  string    `json:"sensor"`
	Temp    float64   `json:"temp"`
	At      time.Time `json:"at"`
	Tags    []string  `json:"tags"`
	Data    []byte    `json:"data"`
	PauseMS int       `json:"pause_ms"`
	Crash   bool      `json:"crash"`
}

// Key is the aggregate's composite key.
type Key struct {
	Region string
	Shard  int
}

// Celsius and Label are named basic types.
type (
	Celsius float64
	Label   string
)

// Trie is a named type that contains itself: the words it holds, one
// rune per level ('$' ends a word).
type Trie map[rune]Trie

// Node is a struct that contains itself through a slice.
type Node struct {
	Name Label
	Kids []Node
}

// Tags is a named slice.
type Tags []Label

// Inner is a struct held by value, by pointer, in slices and in maps.
type Inner struct {
	Name  string
	Count int32
	Ratio float32
}

// Span is a nested named struct.
type Span struct {
	First time.Time
	Last  time.Time
	Width time.Duration
}

// Acc is the aggregate's accumulator: every kind of type the serializers
// handle.
type Acc struct {
	Count uint32
	Small uint8
	Delta int16
	Big   uint64
	Neg   int64
	Tiny  int8
	Wide  uint16
	Total float64
	Max   Celsius
	Label Label
	Seen  bool
	Span  // embedded
	Meta  struct {
		Sensors int
		Last    string
		Hot     *Inner
	}
	Hottest *Inner
	Best    *int
	Never   *Inner
	Items   []Inner
	Blob    []byte
	ByTag   map[string][]int
	ByID    map[int64]*Inner
	Top     [3]float32
	Grid    [2][2]int8
	Labels  []Label
	Pauses  []*int
	Stamps  map[Label]time.Time
	Temps   []Celsius
	Depth   **int
	Notes   []struct {
		N int
		S *string
	}
	TagLists [][]string
	Gaps     []time.Duration
	Extra    *[]uint32
	Words    Trie
	Tags     Tags
	Tree     Node
}

// Reading is the reduce's state: a struct that refers to itself.
type Reading struct {
	Sensor Label
	Temp   Celsius
	Max    Celsius
	Count  int
	At     time.Time
	Every  time.Duration
	Flags  [2]bool
	Notes  map[string]string
	Prev   *Reading
}

// Pace sleeps on the records that ask for it, so that checkpoints happen
// between the records around them.
func Pace(e Event) Event {
	if e.PauseMS > 0 {
		time.Sleep(time.Duration(e.PauseMS) * time.Millisecond)
	}
	return e
}

func ByKey(e Event) Key { return Key{Region: e.Region, Shard: e.Shard} }

// crashed makes the first crash record fail the job and the replayed one
// pass: the process restarts the job in place.
var crashed atomic.Bool

// Add folds an event into the accumulator. A key's events arrive in the
// order of the file, after the restart too: one subtask reads and paces
// them all.
func Add(acc *Acc, e Event) {
	if e.Crash && crashed.CompareAndSwap(false, true) {
		panic("statetypes: injected failure, to restart from the checkpoint")
	}
	acc.Count++
	acc.Small += uint8(e.Shard * 100) // wraps
	acc.Delta -= int16(e.Shard) * 1000
	acc.Big += 1<<62 + uint64(e.Shard)
	if acc.Count == 1 {
		acc.Neg = math.MinInt64
		acc.Tiny = math.MaxInt8
		acc.Wide = math.MaxUint16
	}
	acc.Neg++
	acc.Tiny--
	acc.Wide--
	acc.Total += e.Temp
	if acc.Count == 1 || Celsius(e.Temp) > acc.Max {
		acc.Max = Celsius(e.Temp)
	}
	acc.Label = Label(fmt.Sprintf("%s#%d", e.Region, e.Shard))
	acc.Seen = acc.Seen || slices.Contains(e.Tags, "seen")
	if acc.Span.First.IsZero() || e.At.Before(acc.Span.First) {
		acc.Span.First = e.At
	}
	if e.At.After(acc.Span.Last) {
		acc.Span.Last = e.At
	}
	acc.Span.Width = acc.Span.Last.Sub(acc.Span.First)

	in := Inner{Name: e.Sensor, Count: int32(acc.Count), Ratio: float32(e.Temp) / 4}
	if !slices.Contains(acc.Labels, Label(e.Sensor)) {
		acc.Labels = append(acc.Labels, Label(e.Sensor))
		slices.Sort(acc.Labels)
		acc.Meta.Sensors++
	}
	acc.Meta.Last = max(acc.Meta.Last, e.Sensor)
	if e.Temp > 30 {
		acc.Meta.Hot = &Inner{Name: "hot", Count: -1}
	}
	if acc.Hottest == nil || in.Ratio > acc.Hottest.Ratio {
		acc.Hottest = &Inner{Name: in.Name, Ratio: in.Ratio}
	}
	if e.Temp < 0 {
		acc.Best = new(int)
		*acc.Best += int(e.Temp)
	}
	acc.Items = append(acc.Items, in)
	if e.Data != nil && string(e.Data) > string(acc.Blob) {
		acc.Blob = e.Data
	}
	for _, t := range e.Tags {
		if acc.ByTag == nil {
			acc.ByTag = map[string][]int{}
		}
		acc.ByTag[t] = append(acc.ByTag[t], int(e.Temp*10))
	}
	if acc.ByID == nil {
		acc.ByID = map[int64]*Inner{}
	}
	if slices.Contains(e.Tags, "nil") {
		acc.ByID[e.At.UnixNano()] = nil
	} else {
		acc.ByID[e.At.UnixNano()] = &in
	}
	acc.Top[2] = float32(e.Temp)
	slices.SortFunc(acc.Top[:], func(a, b float32) int { return cmp.Compare(b, a) })
	row, col := 0, e.Shard%2
	if e.Temp > 0 {
		row = 1
	}
	acc.Grid[row][col]++
	if e.PauseMS > 0 {
		acc.Pauses = append(acc.Pauses, &e.PauseMS)
	} else {
		acc.Pauses = append(acc.Pauses, nil)
	}
	if acc.Stamps == nil {
		acc.Stamps = map[Label]time.Time{}
	}
	if e.At.After(acc.Stamps[Label(e.Sensor)]) {
		acc.Stamps[Label(e.Sensor)] = e.At
	}
	acc.Temps = append(acc.Temps, Celsius(e.Temp))
	if acc.Depth == nil {
		n := 0
		p := &n
		acc.Depth = &p
	}
	**acc.Depth += len(e.Tags)
	var s *string
	if len(e.Tags) > 0 {
		s = &e.Tags[0]
	}
	acc.Notes = append(acc.Notes, struct {
		N int
		S *string
	}{N: len(e.Tags), S: s})
	acc.TagLists = append(acc.TagLists, e.Tags)
	acc.Gaps = append(acc.Gaps, e.At.Sub(acc.Span.First))
	if e.PauseMS > 0 {
		if acc.Extra == nil {
			acc.Extra = new([]uint32)
		}
		*acc.Extra = append(*acc.Extra, uint32(e.PauseMS))
	}
	if acc.Words == nil {
		acc.Words = Trie{}
	}
	acc.Words.add(e.Sensor + e.Region)
	for _, t := range e.Tags {
		if !slices.Contains(acc.Tags, Label(t)) {
			acc.Tags = append(acc.Tags, Label(t))
		}
	}
	acc.Tree.Name = Label(e.Region)
	sensor := acc.Tree.kid(Label(e.Sensor))
	for _, t := range e.Tags {
		sensor.kid(Label(t))
	}
}

// kid returns n's child named name, adding it (in order) if needed.
func (n *Node) kid(name Label) *Node {
	i, found := slices.BinarySearchFunc(n.Kids, name, func(k Node, name Label) int { return cmp.Compare(k.Name, name) })
	if !found {
		n.Kids = slices.Insert(n.Kids, i, Node{Name: name})
	}
	return &n.Kids[i]
}

func (n Node) String() string {
	if len(n.Kids) == 0 {
		return string(n.Name)
	}
	return fmt.Sprintf("%s%v", n.Name, n.Kids)
}

func (t Trie) add(word string) {
	for _, r := range word + "$" {
		if t[r] == nil {
			t[r] = Trie{}
		}
		t = t[r]
	}
}

// words lists the trie's words, sorted.
func (t Trie) words(prefix string) []string {
	var out []string
	for _, r := range slices.Sorted(maps.Keys(t)) {
		if r == '$' {
			out = append(out, prefix)
			continue
		}
		out = append(out, t[r].words(prefix+string(r))...)
	}
	return out
}

// Render prints an accumulator on one line, with its slices sorted and its
// times in UTC (the serializers keep instants, not locations).
func Render(k Key, acc *Acc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%d count=%d small=%d delta=%d big=%d neg=%d tiny=%d wide=%d total=%g max=%g label=%s seen=%t",
		k.Region, k.Shard, acc.Count, acc.Small, acc.Delta, acc.Big, acc.Neg, acc.Tiny, acc.Wide, acc.Total, acc.Max, acc.Label, acc.Seen)
	fmt.Fprintf(&b, " span=[%s %s %s]", utc(acc.Span.First), utc(acc.Span.Last), acc.Span.Width)
	fmt.Fprintf(&b, " meta={%d %s %s}", acc.Meta.Sensors, acc.Meta.Last, inner(acc.Meta.Hot))
	fmt.Fprintf(&b, " hottest=%s best=%s never=%s", inner(acc.Hottest), intPtr(acc.Best), inner(acc.Never))
	items := slices.Clone(acc.Items)
	slices.SortFunc(items, func(a, b Inner) int {
		return cmp.Or(cmp.Compare(a.Count, b.Count), strings.Compare(a.Name, b.Name))
	})
	fmt.Fprintf(&b, " items=%v blob=%q nilblob=%t", items, acc.Blob, acc.Blob == nil)
	fmt.Fprintf(&b, " bytag={")
	for i, t := range slices.Sorted(maps.Keys(acc.ByTag)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%v", t, slices.Sorted(slices.Values(acc.ByTag[t])))
	}
	fmt.Fprintf(&b, "} byid={")
	for i, id := range slices.Sorted(maps.Keys(acc.ByID)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s", id, inner(acc.ByID[id]))
	}
	fmt.Fprintf(&b, "} top=%v grid=%v labels=%v", acc.Top, acc.Grid, acc.Labels)
	pauses := make([]string, len(acc.Pauses))
	for i, p := range acc.Pauses {
		pauses[i] = intPtr(p)
	}
	slices.Sort(pauses)
	fmt.Fprintf(&b, " pauses=%v stamps={", pauses)
	for i, l := range slices.Sorted(maps.Keys(acc.Stamps)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%s", l, utc(acc.Stamps[l]))
	}
	fmt.Fprintf(&b, "} temps=%v", slices.Sorted(slices.Values(acc.Temps)))
	depth := "nil"
	if acc.Depth != nil {
		depth = "&" + intPtr(*acc.Depth)
	}
	notes := make([]string, len(acc.Notes))
	for i, n := range acc.Notes {
		s := "nil"
		if n.S != nil {
			s = "&" + *n.S
		}
		notes[i] = fmt.Sprintf("{%d %s}", n.N, s)
	}
	slices.Sort(notes)
	lists := make([]string, len(acc.TagLists))
	for i, l := range acc.TagLists {
		lists[i] = fmt.Sprint(l)
	}
	slices.Sort(lists)
	fmt.Fprintf(&b, " depth=%s notes=%v taglists=%v gaps=%v", depth, notes, lists, slices.Sorted(slices.Values(acc.Gaps)))
	extra := "nil"
	if acc.Extra != nil {
		extra = fmt.Sprintf("&%v", *acc.Extra)
	}
	fmt.Fprintf(&b, " extra=%s words=%v tags=%v tree=%v", extra, acc.Words.words(""), slices.Sorted(slices.Values(acc.Tags)), acc.Tree)
	return b.String()
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func inner(p *Inner) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("&%v", *p)
}

func intPtr(p *int) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("&%d", *p)
}

// ToReading turns an event into a sensor reading.
func ToReading(e Event) Reading {
	r := Reading{Sensor: Label(e.Sensor), Temp: Celsius(e.Temp), Max: Celsius(e.Temp), Count: 1, At: e.At}
	r.Flags[0] = e.Temp < 0
	r.Flags[1] = e.PauseMS > 0
	if len(e.Tags) > 0 {
		r.Notes = map[string]string{e.Tags[0]: e.Region}
	}
	return r
}

func BySensor(r Reading) Label { return r.Sensor }

// Merge folds a reading into the sensor's state, keeping the previous state
// (without its own previous one) in Prev.
func Merge(acc, in Reading) Reading {
	prev := acc
	prev.Prev = nil
	prev.Notes = maps.Clone(acc.Notes)
	out := Reading{
		Sensor: acc.Sensor,
		Temp:   in.Temp,
		Max:    max(acc.Max, in.Max),
		Count:  acc.Count + in.Count,
		At:     in.At,
		Every:  in.At.Sub(acc.At),
		Flags:  [2]bool{acc.Flags[0] || in.Flags[0], acc.Flags[1] || in.Flags[1]},
		Notes:  maps.Clone(acc.Notes),
		Prev:   &prev,
	}
	for k, v := range in.Notes {
		if out.Notes == nil {
			out.Notes = map[string]string{}
		}
		out.Notes[k] += v
	}
	return out
}

// RenderReading prints a sensor's state on one line.
func RenderReading(r Reading) string {
	s := fmt.Sprintf("%s temp=%g max=%g count=%d at=%s every=%s flags=%v notes=%v",
		r.Sensor, r.Temp, r.Max, r.Count, utc(r.At), r.Every, r.Flags, r.Notes)
	if r.Prev != nil {
		s += " prev=(" + RenderReading(*r.Prev) + ")"
	}
	return s
}
