package checkpoint

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
)

// keyRange is the key groups a subtask of node owns.
func (t *Task) keyRange(node int) (start, end int) {
	return keygroup.Range(t.sub, t.cp.cfg.MaxParallelism, t.cp.cfg.Nodes[node].Parallelism)
}

// SnapshotMemory captures keyed state held in memory. At the barrier it
// only closes the state's epoch; the writer encodes the state while the
// subtask goes on (state.Memory copies on write what the subtask changes
// before the writer got to it). What is written is a delta, the keys
// changed since the newest completed checkpoint, on top of that
// checkpoint's files, or a full file when there is no such checkpoint or
// when its deltas have grown as large as its full file (consolidation:
// a restore reads at most about twice the state). Both go to the shared
// folder, where the manifests of later checkpoints refer to them.
func SnapshotMemory[K comparable, V any](s *Snapshot, node int, st *state.Memory[K, V], c *state.Codec[K, V]) {
	SnapshotMemoryState(s, node, "", st, c)
}

// SnapshotMemoryState is SnapshotMemory of the named state of node (""
// for its main state; "map.F" for the map state of field F of a process
// node's state).
func SnapshotMemoryState[K comparable, V any](s *Snapshot, node int, stateName string, st *state.Memory[K, V], c *state.Codec[K, V]) {
	if done := st.InFlight(); done != nil {
		s.task.waitWritten(done)
	}
	st.Sweep() // expired values (state TTL) leave before the capture
	m := s.stateChain(node, stateName)
	since, keep := uint64(0), st.Epoch()
	if m.ok {
		since, keep = m.base.epoch, m.base.epoch
	}
	capture := st.Capture(m.full, since, keep, c)
	s.addMemoryFile(m, c.KeySchema, c.ValueSchema, memoryCapture{epoch: capture.Epoch, keys: capture.Keys, write: capture.Write, entries: capture.Entries, abandon: capture.Abandon})
}

// waitWritten waits until the previous capture of a state is written
// (done is closed): its checkpoint expired, say, and the state has one
// capture at a time.
func (t *Task) waitWritten(done <-chan struct{}) {
	select {
	case <-done:
	case <-t.cp.ctx.Done():
		fault.Abort(fault.ErrCanceled)
	}
}

// stateChain is where the checkpoint of a state of the subtask that
// writes deltas (state.Memory, Changes) builds on: base, the newest
// completed checkpoint's files (if ok), and whether the state is written
// whole (full) instead of as a delta.
type stateChain struct {
	node  int
	state string
	ch    *chain
	base  chainLink
	ok    bool
	full  bool
}

func (s *Snapshot) stateChain(node int, stateName string) stateChain {
	t := s.task
	m := stateChain{node: node, state: stateName, ch: t.chain(node, stateName)}
	m.base, m.ok = m.ch.get(t.cp.Committed())
	// A savepoint's checkpoint writes the state whole (canonical form).
	m.full = !m.ok || m.base.deltas >= m.base.base || len(m.base.files) >= maxChain || s.Savepoint()
	return m
}

// link is the chain after the checkpoint that wrote f, of the state as
// it was at epoch: f alone when it is full, else the base's files and f,
// a delta, on top.
func (m stateChain) link(f storage.StateFile, epoch uint64) chainLink {
	if m.full {
		return chainLink{epoch: epoch, files: []storage.StateFile{f}, base: f.Size}
	}
	f.Kind = storage.KindDelta
	return chainLink{epoch: epoch, files: append(slices.Clone(m.base.files), f), base: m.base.base, deltas: m.base.deltas + f.Size}
}

// memoryCapture is a state.Capture without its key and value types:
// the writer's part of SnapshotMemoryState, which is not generic, so that
// programs do not compile it again for each state.
type memoryCapture struct {
	epoch   uint64
	keys    int
	write   func(section func(parts ...[]byte) error) error
	entries func() int
	abandon func()
}

// addMemoryFile adds to the snapshot the file that the writer writes
// capture into, in chain m.
func (s *Snapshot) addMemoryFile(m stateChain, keySchema, valueSchema string, capture memoryCapture) {
	t := s.task
	node, stateName := m.node, m.state
	start, end := t.keyRange(node)
	n := &t.cp.cfg.Nodes[node]
	id, sub := s.ID, t.sub
	s.files = append(s.files, keyedFiles{node: node, state: stateName, keySchema: keySchema, valueSchema: valueSchema, abandon: capture.abandon,
		write: func(stor *storage.Storage) ([]storage.StateFile, int64, error) {
			name := fmt.Sprintf("%s-%d-%06d.state", StateStem(n.UID, stateName), sub, id)
			w, err := stor.CreateShared(name, start, end-start)
			if err != nil {
				capture.abandon()
				return nil, 0, err
			}
			if err := capture.write(func(parts ...[]byte) error { w.Section(parts...); return nil }); err != nil {
				w.Abort()
				return nil, 0, fmt.Errorf("%s[%d]: %w", n.Name, sub, err)
			}
			size, crc, err := w.Close()
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", filepath.Join(storage.SharedDir, name), err)
			}
			f := storage.StateFile{Subtask: sub, State: stateName, Name: name, Shared: true, KeyGroups: [2]int{start, end}, Size: size, CRC: crc, Entries: int64(capture.entries()), Keys: int64(capture.keys)}
			link := m.link(f, capture.epoch)
			m.ch.put(id, link)
			return link.files, size, nil
		}})
}

// maxChain is the most files a subtask's memory state takes in one
// checkpoint: the next one is written in full.
const maxChain = 100

// chain is what the checkpoints of one memory state of a subtask
// consist of, by checkpoint id: the newest completed one is what the next
// delta builds on. The writer adds to it, the subtask reads it at the
// barrier.
type chain struct {
	mu    sync.Mutex
	links map[int64]chainLink
}

type chainLink struct {
	// epoch is the state's epoch that the checkpoint captured.
	epoch uint64
	// files are the full file and the deltas on top of it; base and
	// deltas their sizes.
	files        []storage.StateFile
	base, deltas int64
}

func (c *chain) get(id int64) (chainLink, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.links[id]
	// Older checkpoints will never be built on again.
	for k := range c.links {
		if k < id {
			delete(c.links, k)
		}
	}
	return l, ok
}

func (c *chain) put(id int64, l chainLink) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.links[id] = l
}

// chain returns the chain of the named state of node.
func (t *Task) chain(node int, name string) *chain {
	key := fmt.Sprint(node, "/", name)
	t.cp.mu.Lock()
	defer t.cp.mu.Unlock()
	if t.chains == nil {
		t.chains = map[string]*chain{}
	}
	c := t.chains[key]
	if c == nil {
		c = &chain{links: map[int64]chainLink{}}
		t.chains[key] = c
	}
	return c
}

// RestoreMemory binds keyed state held in memory to the subtask's key
// groups and fills it from the checkpoint the job resumes from: the
// sections of the key groups this subtask owns, from whichever files hold
// them (the parallelism may have changed), full files and then the deltas
// on top of them. When the subtask owns exactly the key groups that one
// subtask of the checkpoint wrote, and those files are shared, its next
// checkpoint may be a delta on top of them.
func RestoreMemory[K comparable, V any](t *Task, node int, st *state.Memory[K, V], c *state.Codec[K, V]) {
	RestoreMemoryState(t, node, "", st, c)
}

// RestoreMemoryState is RestoreMemory of the named state of node.
func RestoreMemoryState[K comparable, V any](t *Task, node int, stateName string, st *state.Memory[K, V], c *state.Codec[K, V]) {
	start, end := t.keyRange(node)
	st.SetTTL(c.TTL)
	st.SetClock(t.NowMillis)
	st.Bind(keyGroupOf(t, c.Hash), start, end)
	t.restoreMemory(node, stateName, st.Track, st.Reserve, func(kg int, sec []byte, delta bool) error {
		return st.RestoreSection(kg, sec, delta, c)
	}, st.Restored)
}

// restoreMemory is RestoreMemoryState once the state is bound: it is not
// generic, so that programs do not compile it again for each state.
func (t *Task) restoreMemory(node int, stateName string, track func(), reserve func(keys int), section func(kg int, sec []byte, delta bool) error, restored func()) {
	start, end := t.keyRange(node)
	files := t.restoredChain(node, stateName, track)
	if len(files) == 0 {
		return
	}
	l := t.cp.restored
	name := t.cp.cfg.Nodes[node].Name
	t.restores = append(t.restores, func() {
		reserve(restoredKeys(files, start, end))
		for _, f := range files {
			readSections(l, f, start, end, name, func(kg int, sec []byte) error {
				return section(kg, sec, f.Kind == storage.KindDelta)
			})
		}
		restored()
	})
}

// readSections reads the sections of state file f of the restored
// checkpoint l, each checked as it is read, and gives read those of key
// groups [start, end) (Loaded.ReadSections: a section is valid only
// until read returns); a failure aborts the restore of node name.
func readSections(l *storage.Loaded, f storage.StateFile, start, end int, name string, read func(kg int, sec []byte) error) {
	if err := l.ReadSections(f, start, end, read); err != nil {
		fault.Abortf("restore %s: %w", name, err)
	}
}

// restoredKeys is about how many keys of key groups [start, end) files
// hold, in proportion to each chain's key groups in the range (the keys
// spread evenly over the key groups). A chain (the full file and deltas
// of one old subtask) holds the keys its newest file says its subtask
// held (Keys). A file that does not say adds its entries, a delta's
// too, although some change keys of the full file: a state that grew
// since its full file (a chain taken while keys were added) would
// otherwise outgrow the index the restore made and rehash it, maybe
// twice, which cost more than its fill; counting them at worst doubles
// the index's slots once. Keys makes both unnecessary: a chain of 32
// deltas of 50K changed values on a full file of 5M keys made an index
// for 6.6M keys, twice the slots (16M, 256 MB, every page of which a
// restore writes) that 5M take.
func restoredKeys(files []storage.StateFile, start, end int) int {
	type chain struct {
		subtask   int
		keyGroups [2]int
	}
	keys := map[chain]int64{}
	for _, f := range files {
		c := chain{f.Subtask, f.KeyGroups}
		switch {
		case f.Keys > 0:
			keys[c] = f.Keys
		case f.Entries > 0:
			keys[c] += f.Entries
		}
	}
	n := 0
	for c, k := range keys {
		groups := c.keyGroups[1] - c.keyGroups[0]
		in := min(c.keyGroups[1], end) - max(c.keyGroups[0], start)
		if groups > 0 && in > 0 {
			n += int(k * int64(in) / int64(groups))
		}
	}
	return n
}

// SnapshotKeyed captures keyed state of any shape (windows, timers, join
// buffers) that writes itself into key-group sections. name tells apart
// the states of one node ("" for its main state). Each section's buffer
// starts with the size that section had in the subtask's previous
// snapshot, so that encoding rarely grows a buffer, and is that
// snapshot's buffer where it is large enough and the writer is done with
// it (sectionBuffers): a state written whole at every checkpoint would
// otherwise allocate its size anew each time.
func SnapshotKeyed[K comparable](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, write func(sec *state.Sections, keyGroup func(K) int) error) {
	kg := keyGroupOf(s.task, hash)
	s.snapshotKeyed(node, name, keySchema, valueSchema, func(sec *state.Sections) error { return write(sec, kg) })
}

// snapshotKeyed is SnapshotKeyed without the key's type, which is in
// write's closure: it is not generic, so that programs do not compile it
// again for each key type.
func (s *Snapshot) snapshotKeyed(node int, name string, keySchema, valueSchema string, write func(sec *state.Sections) error) {
	start, end := s.task.keyRange(node)
	hint := s.task.sizeHint(node, name, end-start)
	spare := s.task.sectionBuffers(node, name)
	sec := spare.sections(start, end, hint)
	err := write(sec)
	for i := 0; err == nil && i < len(sec.W); i++ {
		err = sec.W[i].Err() // a value the encoder refused, such as a cycle
	}
	if err != nil {
		s.err = fmt.Errorf("%s[%d]: %w", s.task.cp.cfg.Nodes[node].Name, s.task.sub, err)
		return
	}
	ks := keyedSnapshot{node: node, state: name, start: start, keySchema: keySchema, valueSchema: valueSchema, spare: spare}
	for i := range sec.W {
		b := sec.W[i].Bytes()
		hint[i] = len(b)
		ks.sections = append(ks.sections, b)
	}
	s.keyed = append(s.keyed, ks)
}

// sizeHint returns the section sizes of the subtask's previous snapshot
// of the named state of node (zeros the first time), to be updated.
func (t *Task) sizeHint(node int, name string, n int) []int {
	key := fmt.Sprint(node, "/", name)
	h := t.hints[key]
	if len(h) != n {
		h = make([]int, n)
		if t.hints == nil {
			t.hints = map[string][]int{}
		}
		t.hints[key] = h
	}
	return h
}

// RestoreKeyed hands to read the sections of the key groups this subtask
// owns in the named state of node, from the checkpoint the job resumes
// from, whichever files hold them (the parallelism may have changed).
//
// The reading is done later, before the job's subtasks start: the job
// restores its subtasks in parallel (RunRestores), each reading its files
// one section at a time, so that no file is held in memory whole and what
// was read is garbage once decoded. read keeps nothing of a section: its
// bytes are reused for the next one.
func RestoreKeyed(t *Task, node int, name string, read func(section []byte) error) {
	ns := t.cp.restoredNode(node)
	if ns == nil {
		return // a fresh start, or a node new in this version: it starts empty
	}
	l := t.cp.restored
	n := &t.cp.cfg.Nodes[node]
	start, end := t.keyRange(node)
	t.restores = append(t.restores, func() {
		for _, f := range ns.Files {
			if f.State != name || f.KeyGroups[1] <= start || f.KeyGroups[0] >= end {
				continue
			}
			readSections(l, f, start, end, n.Name, func(_ int, sec []byte) error { return read(sec) })
		}
	})
}

// restoredChain returns the files of node's state name, in the checkpoint
// the run resumes from, that hold key groups this subtask owns. When they
// are exactly one old subtask's chain (shared files of the same key
// groups), the chain goes on from them: track is called, and the next
// checkpoint may write a delta on top. Files of a pebble store are
// refused: a program built for the memory backend cannot read them.
func (t *Task) restoredChain(node int, name string, track func()) []storage.StateFile {
	ns := t.cp.restoredNode(node)
	if ns == nil {
		return nil
	}
	start, end := t.keyRange(node)
	var files []storage.StateFile
	continues := true
	for _, f := range ns.Files {
		if f.State != name || f.KeyGroups[1] <= start || f.KeyGroups[0] >= end {
			continue
		}
		if f.Kind == storage.KindPebble {
			fault.Abortf("restore %s: checkpoint %d holds its state in Pebble stores (state.backend: pebble), which this program, built with state.backend memory, cannot read; build it with state.backend: pebble, or run --fresh", t.cp.cfg.Nodes[node].Name, t.cp.restored.Manifest.ID)
		}
		files = append(files, f)
		continues = continues && f.Shared && f.KeyGroups == [2]int{start, end}
	}
	if len(files) > 0 && continues {
		link := chainLink{files: files}
		for _, f := range files {
			if f.Kind == storage.KindDelta {
				link.deltas += f.Size
			} else {
				link.base += f.Size
			}
		}
		t.chain(node, name).put(t.cp.restored.Manifest.ID, link)
		track()
	}
	return files
}
