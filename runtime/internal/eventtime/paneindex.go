package eventtime

import "github.com/pipegen/pipegen/runtime/internal/intkey"

// paneIndex finds a key's place in the sliding panes of a WindowState
// with one map lookup per record, not one per pane (integer keys: one
// array index in a page, most often).
//
// A record of a sliding window belongs to Size/Slide panes (q5 of Nexmark:
// five), and a map per pane from key to index cost a lookup for each: 27-33%
// of q5's CPU. Here a key has one slot (the only map lookup), and the slot
// a small ring of (pane start, index) pairs, one per pane position: the
// position of a pane is its start divided by the slide, modulo the ring's
// width, which is one more than the
// panes a record belongs to. The panes of one record fall on distinct
// positions, and a position is reused only when the watermark has passed a
// pane that many slides older; a pair that a newer pane would overwrite
// while its pane is still open (a watermark that lags, allowed lateness),
// or that a late record makes for an older pane, goes to the spill map
// instead. So a pair is in the ring or in spill, never both, and lookups
// try the ring first.
//
// A pane lists the slot of each of its keys (pane.slots), so that dropping
// it clears its pairs without hashing. A key whose last pane is dropped
// keeps its slot for a while, as most keys come back in later windows:
// slots without panes are freed in sweeps, when they outnumber those with
// panes, so that a sweep's cost is spread over the drops before it.
//
// Keys that are 8-byte integers (Nexmark's auction ids) find their slot
// in pages of the key space instead of the map while the keys are dense
// enough (denseSlots): the keys of a stream of ids are mostly recent ones,
// next to each other in a page that stays in the cache, where a map
// scatters them (the map's lookup was 12-15% of q5's CPU, missing the
// cache at some 300K auctions). Keys too sparse for pages go back to the
// map, once and for good.
//
// Tumbling windows (and sliding ones no longer than their slide) have one
// window per record: for them an index per pane (pane.idx: an array by
// key for dense integer keys, keyindex.go, else a map) is one lookup per
// record too, and cheaper than a slot and its ring (BenchmarkWindowState
// Tumbling/sparse took twice the time with the ring, its keys coming and
// going with every window), so they keep it and the index is off (width
// 0).
type paneIndex[K comparable] struct {
	step  int64 // the slide
	width int   // 0: off

	slots map[K]int32
	// dense is set while the slots of keys are in pages rather than in
	// slots: pages by key>>pageBits, the page of the last lookup kept.
	dense    bool
	pages    map[int64]*slotPage
	lastPg   int64
	lastPage *slotPage
	nkeys    int // keys with a slot in pages
	// refs holds width pairs per slot, in chunks of slotChunk slots: but
	// for the first, a chunk is never copied when the keys grow. A
	// pointer into it (ref) is valid until the next new slot.
	refs  [][]paneRef
	live  []int32 // per slot, the panes that hold the key
	free  []int32
	idle  int // slots in the map whose live is 0
	spill map[spillKey[K]]int32

	// lastStart and lastPos cache the position of the last record's first
	// pane: most records fall in the panes of the one before.
	lastStart int64
	lastPos   int
}

// paneRef is a key's index in the pane that starts at start; i is -1 for
// an empty ring position.
type paneRef struct {
	start int64
	i     int32
}

type spillKey[K comparable] struct {
	k     K
	start int64
}

const slotChunk = 1024

// A slotPage holds the slots of pageSize consecutive integer keys, each
// plus one (0: the key has no slot), and how many it holds.
type slotPage struct {
	n  int32
	sl [pageSize]int32
}

const (
	pageBits = 8
	pageSize = 1 << pageBits
	pageMask = pageSize - 1
	// Pages are kept while they hold at least one key in denseMin on
	// average, past the first freePages.
	denseMin  = 32
	freePages = 64
)

// maxPaneRing bounds the ring per key: sliding windows of many slides
// (an hour every second) would otherwise cost the key that many pairs.
// Their records spill more.
const maxPaneRing = 17

func newPaneIndex[K comparable](a WindowAssigner) paneIndex[K] {
	if a.Kind != Sliding || a.Size <= a.Slide {
		return paneIndex[K]{}
	}
	x := paneIndex[K]{step: a.Slide, slots: make(map[K]int32), lastStart: MinTime}
	if intkey.Is[K]() {
		x.dense, x.pages = true, make(map[int64]*slotPage)
	}
	x.width = int(min((a.Size+a.Slide-1)/a.Slide+1, maxPaneRing))
	x.lastPos = x.pos(MinTime)
	return x
}

// pos is the ring position of the pane that starts at start: floor
// division, so that the next pane is always at the next position.
func (x *paneIndex[K]) pos(start int64) int {
	q := start / x.step
	if start%x.step != 0 && start < 0 {
		q--
	}
	r := int(q % int64(x.width))
	if r < 0 {
		r += x.width
	}
	return r
}

// firstPos is pos with the last record's answer kept.
func (x *paneIndex[K]) firstPos(start int64) int {
	if start != x.lastStart {
		x.lastStart, x.lastPos = start, x.pos(start)
	}
	return x.lastPos
}

// slot returns k's slot, making one when k has none.
func (x *paneIndex[K]) slot(k K) int32 {
	if x.dense {
		v := intkey.Of(k)
		if pg := x.lastPage; pg != nil && v>>pageBits == x.lastPg {
			if sl := pg.sl[v&pageMask]; sl != 0 {
				return sl - 1
			}
		}
		return x.slotDense(k, v)
	}
	if sl, ok := x.slots[k]; ok {
		return sl
	}
	return x.newSlot(k)
}

// slotDense is slot for keys in pages past the last page's hit.
func (x *paneIndex[K]) slotDense(k K, v int64) int32 {
	pg := x.pages[v>>pageBits]
	if pg != nil {
		x.lastPg, x.lastPage = v>>pageBits, pg
		if sl := pg.sl[v&pageMask]; sl != 0 {
			return sl - 1
		}
	}
	return x.newSlot(k)
}

// has returns k's slot, if it has one.
func (x *paneIndex[K]) has(k K) (int32, bool) {
	if x.dense {
		v := intkey.Of(k)
		if pg := x.pages[v>>pageBits]; pg != nil && pg.sl[v&pageMask] != 0 {
			return pg.sl[v&pageMask] - 1, true
		}
		return 0, false
	}
	sl, ok := x.slots[k]
	return sl, ok
}

// keys is the number of keys with a slot.
func (x *paneIndex[K]) keys() int {
	if x.dense {
		return x.nkeys
	}
	return len(x.slots)
}

// newSlot makes k a slot.
func (x *paneIndex[K]) newSlot(k K) int32 {
	if x.idle > x.keys()/2+64 {
		x.sweep()
	}
	var sl int32
	if n := len(x.free); n > 0 {
		sl = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		sl = int32(len(x.live))
		x.live = append(x.live, 0)
		if int(sl)%slotChunk == 0 {
			// The first chunk grows, for the many states with few keys;
			// the others are made whole.
			n := slotChunk * x.width
			if sl == 0 {
				n = 8 * x.width
			}
			x.refs = append(x.refs, make([]paneRef, 0, n))
		}
		c := &x.refs[len(x.refs)-1]
		for range x.width {
			*c = append(*c, paneRef{i: -1})
		}
	}
	x.setSlot(k, sl)
	x.idle++ // until put
	return sl
}

// setSlot records k's new slot.
func (x *paneIndex[K]) setSlot(k K, sl int32) {
	if !x.dense {
		x.slots[k] = sl
		return
	}
	v := intkey.Of(k)
	pg := x.pages[v>>pageBits]
	if pg == nil {
		if len(x.pages) >= freePages && (len(x.pages)+1)*pageSize > denseMin*(x.nkeys+1) {
			// Too sparse: a page per key or so.
			x.toMap()
			x.slots[k] = sl
			return
		}
		pg = new(slotPage)
		x.pages[v>>pageBits] = pg
	}
	pg.sl[v&pageMask] = sl + 1
	pg.n++
	x.nkeys++
	x.lastPg, x.lastPage = v>>pageBits, pg
}

// toMap moves the slots from the pages to the map, for good.
func (x *paneIndex[K]) toMap() {
	for p, pg := range x.pages {
		for o, sl := range pg.sl {
			if sl != 0 {
				v := p<<pageBits | int64(o)
				x.slots[intkey.To[K](v)] = sl - 1
			}
		}
	}
	x.dense, x.pages, x.lastPage, x.nkeys = false, nil, nil, 0
}

func (x *paneIndex[K]) ref(sl int32, pos int) *paneRef {
	return &x.refs[sl/slotChunk][int(sl%slotChunk)*x.width+pos]
}

// find returns k's index in the pane that starts at start, at ring
// position pos, in slot sl.
func (x *paneIndex[K]) find(sl int32, k K, start int64, pos int) (int32, bool) {
	r := x.ref(sl, pos)
	if r.i >= 0 && r.start == start {
		return r.i, true
	}
	if len(x.spill) > 0 {
		i, ok := x.spill[spillKey[K]{k, start}]
		return i, ok
	}
	return 0, false
}

// put records k's index i in a pane it was not in. The newest pane keeps
// the ring position.
func (x *paneIndex[K]) put(sl int32, k K, start int64, pos int, i int32) {
	r := x.ref(sl, pos)
	switch {
	case r.i < 0:
		*r = paneRef{start, i}
	case r.start < start:
		x.spillPut(spillKey[K]{k, r.start}, r.i)
		*r = paneRef{start, i}
	default:
		x.spillPut(spillKey[K]{k, start}, i)
	}
	if x.live[sl] == 0 {
		x.idle--
	}
	x.live[sl]++
}

func (x *paneIndex[K]) spillPut(sk spillKey[K], i int32) {
	if x.spill == nil {
		x.spill = make(map[spillKey[K]]int32)
	}
	x.spill[sk] = i
}

// set changes k's index in a pane it is in (a pane that was sorted).
func (x *paneIndex[K]) set(sl int32, k K, start int64, pos int, i int32) {
	r := x.ref(sl, pos)
	if r.i >= 0 && r.start == start {
		r.i = i
		return
	}
	x.spill[spillKey[K]{k, start}] = i
}

// remove takes k out of a pane that is dropped, and frees its slot when it
// was the key's last.
func (x *paneIndex[K]) remove(sl int32, k K, start int64, pos int) {
	r := x.ref(sl, pos)
	if r.i >= 0 && r.start == start {
		r.i = -1
	} else {
		delete(x.spill, spillKey[K]{k, start})
	}
	if x.live[sl]--; x.live[sl] == 0 {
		x.idle++
	}
}

// sweep frees the slots of keys that are in no pane.
func (x *paneIndex[K]) sweep() {
	x.idle = 0
	if x.dense {
		for p, pg := range x.pages {
			for o, sl := range pg.sl {
				if sl != 0 && x.live[sl-1] == 0 {
					pg.sl[o] = 0
					pg.n--
					x.nkeys--
					x.free = append(x.free, sl-1)
				}
			}
			if pg.n == 0 {
				delete(x.pages, p)
			}
		}
		x.lastPage = nil
		return
	}
	for k, sl := range x.slots {
		if x.live[sl] == 0 {
			delete(x.slots, k)
			x.free = append(x.free, sl)
		}
	}
}

// lookup returns k's index in the pane that starts at start, if k is in
// it: for the paths that are not per record (restores, deltas, a join's
// updated windows).
func (x *paneIndex[K]) lookup(start int64, k K) (int32, bool) {
	sl, ok := x.has(k)
	if !ok {
		return 0, false
	}
	return x.find(sl, k, start, x.pos(start))
}

// pairs is the number of (key, pane) pairs indexed, for tests.
func (x *paneIndex[K]) pairs() int {
	n := 0
	for _, l := range x.live {
		n += int(l)
	}
	return n
}
