//! From a raw transition table to a [`ByteDfa`]: trimming (states that cannot accept merge into
//! [`DEAD`]), Hopcroft minimisation over a refinable partition, breadth-first renumbering, and the
//! byte classes of the result. The constructions of `ByteDfa` from tables end here.

use foldhash::{HashMap, HashMapExt};

use super::{ByteDfa, StateId, DEAD};

pub(super) enum ColumnMap {
    /// Byte -> column.
    Classes(Box<[u8; 256]>),
}

/// A node of a deterministic graph handed to [`ByteDfa::from_deterministic`].
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct EdgeNode {
    /// Disjoint byte ranges and the node each leads to.
    pub(crate) edges: Vec<(u8, u8, u32)>,
    pub(crate) accepting: bool,
}

/// No node: an edge to it leads nowhere.
pub(crate) const NO_NODE: u32 = u32::MAX;

/// An untrimmed, unminimised table whose state 0 is dead (or, for products, an ordinary state).
pub(super) struct RawDfa {
    pub(super) columns: usize,
    pub(super) column_of: ColumnMap,
    pub(super) transitions: Vec<StateId>,
    pub(super) accepting: Vec<bool>,
    pub(super) start: StateId,
}

impl RawDfa {
    pub(super) fn row(&self, state: usize) -> &[StateId] {
        &self.transitions[state * self.columns..(state + 1) * self.columns]
    }

    pub(super) fn finish(self) -> ByteDfa {
        minimize(self, true)
    }

    pub(super) fn finish_with_ordinary_zero(self) -> ByteDfa {
        minimize(self, false)
    }
}

/// Merges columns that agree in every state, so that refinement below works on a handful of
/// classes instead of 256 bytes.
pub(super) fn merge_equal_columns(raw: RawDfa) -> RawDfa {
    let n = raw.accepting.len();
    let cols = raw.columns;
    let remap = equal_columns(n, cols, |s, row| row.copy_from_slice(raw.row(s)));
    // Groups are numbered in order of their first column: that column stands for the group.
    let mut kept: Vec<usize> = Vec::new();
    for (c, &group) in remap.iter().enumerate() {
        if group as usize == kept.len() {
            kept.push(c);
        }
    }
    if kept.len() == cols {
        return raw;
    }
    let mut transitions = Vec::with_capacity(n * kept.len());
    for s in 0..n {
        transitions.extend(kept.iter().map(|&c| raw.transitions[s * cols + c]));
    }
    let mut classes = [0u8; 256];
    for (b, class) in classes.iter_mut().enumerate() {
        let ColumnMap::Classes(map) = &raw.column_of;
        let column = map[b] as usize;
        *class = remap[column] as u8;
    }
    RawDfa {
        columns: kept.len(),
        column_of: ColumnMap::Classes(Box::new(classes)),
        transitions,
        accepting: raw.accepting,
        start: raw.start,
    }
}

/// Trims states that are unreachable or cannot reach acceptance, merges equivalent states
/// ([`hopcroft`]), renumbers the survivors breadth-first from the start and recomputes byte
/// classes. When `zero_is_dead` is false, state 0 is an ordinary state (it may accept), so only
/// co-reachability decides deadness.
pub(super) fn minimize(raw: RawDfa, zero_is_dead: bool) -> ByteDfa {
    minimize_with(raw, zero_is_dead, hopcroft)
}

/// [`minimize`] with the refinement step as a parameter, so that tests can swap in a reference.
pub(super) fn minimize_with(raw: RawDfa, zero_is_dead: bool, refine: fn(&RawDfa, &[bool]) -> Blocks) -> ByteDfa {
    let raw = merge_equal_columns(raw);
    let live = live_states(&raw, zero_is_dead);
    if !live[raw.start as usize] {
        return ByteDfa::empty();
    }
    let blocks = refine(&raw, &live);
    renumber(&raw, &blocks)
}

/// The states reachable from the start that can still reach an accepting state.
pub(super) fn live_states(raw: &RawDfa, zero_is_dead: bool) -> Vec<bool> {
    let n = raw.accepting.len();
    let expands = |s: usize| !(zero_is_dead && s == 0);
    let mut reachable = vec![false; n];
    let mut stack = vec![raw.start as usize];
    reachable[raw.start as usize] = true;
    while let Some(s) = stack.pop() {
        if !expands(s) {
            continue;
        }
        for &t in raw.row(s) {
            if !reachable[t as usize] {
                reachable[t as usize] = true;
                stack.push(t as usize);
            }
        }
    }
    // Co-reachability walks the reversed edges of reachable states. Edges into a dead zero are
    // left out (most cells of a product lead there, and it never becomes live).
    let sources = || (0..n).filter(|&s| reachable[s] && expands(s));
    let predecessors = Grouped::new(n, |add| {
        for s in sources() {
            for &t in raw.row(s) {
                if expands(t as usize) {
                    add(t as usize, s as StateId);
                }
            }
        }
    });
    let mut live = vec![false; n];
    let mut stack: Vec<usize> = sources().filter(|&s| raw.accepting[s]).collect();
    for &s in &stack {
        live[s] = true;
    }
    while let Some(s) = stack.pop() {
        for &p in predecessors.get(s) {
            if !live[p as usize] {
                live[p as usize] = true;
                stack.push(p as usize);
            }
        }
    }
    live
}

/// A partition of a [`RawDfa`]'s states: `block[s]` is 0 for every non-live state and
/// `1..count` for the classes of equivalent live states.
pub(super) struct Blocks {
    pub(super) block: Vec<u32>,
    pub(super) count: usize,
}

/// Merges equivalent live states with Hopcroft's algorithm. Blocks start as {accepting,
/// rejecting}; a splitter `(B, c)` splits every block into its states with a `c`-transition into
/// `B` and the rest. When a block splits, the splitters of one half can be skipped: being stable
/// for the whole block (now, or once its pending splitters are done) and for one half implies
/// being stable for the other. Keeping the smaller half means each state enters a splitter
/// `O(log n)` times, `O(n · k · log n)` in all for `k` columns, where Moore's refinement needs one
/// pass over the table per level of the automaton's depth.
///
/// Only live states take part; a transition to a non-live state is simply absent, which is why
/// both initial blocks start as splitters (the usual "all but one" shortcut needs a complete DFA).
pub(super) fn hopcroft(raw: &RawDfa, live: &[bool]) -> Blocks {
    let n = raw.accepting.len();
    // The live transitions into live state `t`, as `(column << 32) | source` under key `t`:
    // a splitter gathers only the transitions it has, however many columns the table has.
    let inverse = Grouped::new(n, |add| {
        for s in (0..n).filter(|&s| live[s]) {
            for (c, &t) in raw.row(s).iter().enumerate() {
                if live[t as usize] {
                    add(t as usize, (c as u64) << 32 | s as u64);
                }
            }
        }
    });
    let live_with = |accepting: bool| -> Vec<StateId> {
        (0..n).filter(|&s| live[s] && raw.accepting[s] == accepting).map(|s| s as StateId).collect()
    };
    let mut partition = RefinablePartition::new(n, [live_with(true), live_with(false)]);
    // An entry stands for the splitters `(block, c)` of every column `c`. A split leaves the
    // larger half under the old number, its splitters pending as they were, and pushes the new,
    // smaller half: exactly the splitters that Hopcroft's rule asks for.
    let mut worklist: Vec<u32> = (0..partition.block_count() as u32).collect();
    let mut incoming: Vec<u64> = Vec::new();
    while let Some(splitter) = worklist.pop() {
        // Collected first, for every column at once: marking reorders states, possibly inside
        // the splitter itself. Splitting on the whole block for a later column, after it split
        // on an earlier one, is sound (it is still a union of blocks) and loses nothing (its
        // new half is pending with every column).
        incoming.clear();
        for &t in partition.members(splitter) {
            incoming.extend_from_slice(inverse.get(t as usize));
        }
        incoming.sort_unstable();
        for column in incoming.chunk_by(|a, b| a >> 32 == b >> 32) {
            for &edge in column {
                partition.mark(edge as StateId);
            }
            partition.split_marked(|block| worklist.push(block));
        }
    }
    let mut block = vec![0u32; n];
    for (s, slot) in block.iter_mut().enumerate() {
        if live[s] {
            *slot = partition.block_of(s as u32) + 1;
        }
    }
    Blocks { block, count: partition.block_count() + 1 }
}

/// Values grouped by a key in `0..keys`, stored flat to avoid one allocation per group: group `k`
/// is `states[offsets[k]..offsets[k + 1]]`.
pub(super) struct Grouped<T = StateId> {
    pub(super) offsets: Vec<u32>,
    pub(super) states: Vec<T>,
}

impl<T: Copy + Default> Grouped<T> {
    /// Groups the `(key, value)` pairs that `pairs` passes to its callback; `pairs` runs twice,
    /// once to size the groups and once to fill them.
    pub(super) fn new(keys: usize, pairs: impl Fn(&mut dyn FnMut(usize, T))) -> Grouped<T> {
        let mut offsets = vec![0u32; keys + 1];
        pairs(&mut |key, _| offsets[key + 1] += 1);
        for key in 0..keys {
            offsets[key + 1] += offsets[key];
        }
        let mut next = offsets.clone();
        let mut states = vec![T::default(); offsets[keys] as usize];
        pairs(&mut |key, state| {
            states[next[key] as usize] = state;
            next[key] += 1;
        });
        Grouped { offsets, states }
    }

    pub(super) fn get(&self, key: usize) -> &[T] {
        &self.states[self.offsets[key] as usize..self.offsets[key + 1] as usize]
    }
}

/// A partition of states into blocks that can be split in time proportional to the marked
/// states: each block is a contiguous range of `elements`, with its marked states at the front.
pub(super) struct RefinablePartition {
    pub(super) elements: Vec<StateId>,
    /// State -> index in `elements`.
    pub(super) position: Vec<u32>,
    /// State -> block (meaningful for states in some block only).
    pub(super) block_of: Vec<u32>,
    /// Block -> range `first..end` of `elements`.
    pub(super) first: Vec<u32>,
    pub(super) end: Vec<u32>,
    /// Block -> how many of its states are marked.
    pub(super) marked: Vec<u32>,
    /// Blocks with at least one marked state.
    pub(super) touched: Vec<u32>,
}

impl RefinablePartition {
    /// Blocks from the non-empty `groups` of states among `0..n`.
    pub(super) fn new(n: usize, groups: impl IntoIterator<Item = Vec<StateId>>) -> RefinablePartition {
        let mut partition = RefinablePartition {
            elements: Vec::new(),
            position: vec![0; n],
            block_of: vec![0; n],
            first: Vec::new(),
            end: Vec::new(),
            marked: Vec::new(),
            touched: Vec::new(),
        };
        for group in groups.into_iter().filter(|g| !g.is_empty()) {
            let block = partition.first.len() as u32;
            partition.first.push(partition.elements.len() as u32);
            for s in group {
                partition.position[s as usize] = partition.elements.len() as u32;
                partition.block_of[s as usize] = block;
                partition.elements.push(s);
            }
            partition.end.push(partition.elements.len() as u32);
            partition.marked.push(0);
        }
        partition
    }

    pub(super) fn block_count(&self) -> usize {
        self.first.len()
    }

    pub(super) fn block_of(&self, state: StateId) -> u32 {
        self.block_of[state as usize]
    }

    pub(super) fn members(&self, block: u32) -> &[StateId] {
        &self.elements[self.first[block as usize] as usize..self.end[block as usize] as usize]
    }

    /// Marks `state` by swapping it into its block's marked prefix.
    pub(super) fn mark(&mut self, state: StateId) {
        let block = self.block_of[state as usize] as usize;
        let at = self.position[state as usize];
        let boundary = self.first[block] + self.marked[block];
        if at < boundary {
            // Already marked.
            return;
        }
        let other = self.elements[boundary as usize];
        self.elements.swap(at as usize, boundary as usize);
        self.position[other as usize] = at;
        self.position[state as usize] = boundary;
        if self.marked[block] == 0 {
            self.touched.push(block as u32);
        }
        self.marked[block] += 1;
    }

    /// Splits every partly marked block, giving the smaller half a new block number (so that
    /// relabelling costs the smaller half only), reports each new block, and clears the marks.
    pub(super) fn split_marked(&mut self, mut on_new_block: impl FnMut(u32)) {
        let mut touched = std::mem::take(&mut self.touched);
        for &block in &touched {
            let b = block as usize;
            let (first, end, marked) = (self.first[b], self.end[b], self.marked[b]);
            self.marked[b] = 0;
            if marked == end - first {
                continue;
            }
            let boundary = first + marked;
            let new_range = if marked <= end - boundary {
                self.first[b] = boundary;
                first..boundary
            } else {
                self.end[b] = boundary;
                boundary..end
            };
            let new_block = self.first.len() as u32;
            for &s in &self.elements[new_range.start as usize..new_range.end as usize] {
                self.block_of[s as usize] = new_block;
            }
            self.first.push(new_range.start);
            self.end.push(new_range.end);
            self.marked.push(0);
            on_new_block(new_block);
        }
        touched.clear();
        self.touched = touched;
    }
}

/// Builds the minimal table from a partition: blocks are numbered breadth-first from the start
/// (so that state ids are deterministic), each taking the row of its first state.
pub(super) fn renumber(raw: &RawDfa, blocks: &Blocks) -> ByteDfa {
    let block = &blocks.block;
    let mut representative = vec![usize::MAX; blocks.count];
    for s in (0..raw.accepting.len()).rev() {
        representative[block[s] as usize] = s;
    }
    let order = breadth_first(raw, block, &representative);
    // Block -> new state id; the dead block 0 stays DEAD.
    let mut new_id = vec![DEAD; blocks.count];
    for (i, &b) in order.iter().enumerate() {
        new_id[b as usize] = i as StateId + 1;
    }
    let rows: Vec<usize> = order.iter().map(|&b| representative[b as usize]).collect();
    let target = |s: usize, column: usize| new_id[block[raw.row(s)[column] as usize] as usize];
    let (classes, class_columns) = minimal_classes(raw, rows.len(), |i, out| {
        for (column, cell) in out.iter_mut().enumerate() {
            *cell = target(rows[i], column);
        }
    });
    let class_count = class_columns.len();
    let states = rows.len() + 1;
    let mut transitions = vec![DEAD; states * class_count];
    let mut accepting = vec![false; states];
    for (i, &s) in rows.iter().enumerate() {
        let id = i + 1;
        accepting[id] = raw.accepting[s];
        for (class, &column) in class_columns.iter().enumerate() {
            transitions[id * class_count + class] = target(s, column);
        }
    }
    ByteDfa { classes, class_count, transitions, accepting, start: 1 }
}

/// [`renumber`] of a minimal deterministic graph, read off its edges: the same table (same
/// breadth-first numbering, same byte classes) without a dense table of the graph, whose cells
/// are nearly all dead for a trie. `column_of` cuts bytes at every edge boundary.
pub(super) fn renumber_edges(nodes: &[EdgeNode], start: u32, column_of: &[u8; 256], columns: usize) -> ByteDfa {
    // Each node's edges in byte order: breadth-first numbering visits targets column by column.
    let mut edges: Vec<(u32, u8, u8, u32)> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let first = edges.len();
        edges.extend(node.edges.iter().filter(|e| e.2 != NO_NODE).map(|&(lo, hi, to)| (i as u32, lo, hi, to)));
        edges[first..].sort_unstable_by_key(|e| e.1);
    }
    let mut edge_starts = vec![0usize; nodes.len() + 1];
    for e in &edges {
        edge_starts[e.0 as usize + 1] += 1;
    }
    for i in 0..nodes.len() {
        edge_starts[i + 1] += edge_starts[i];
    }
    let out = |node: u32| &edges[edge_starts[node as usize]..edge_starts[node as usize + 1]];
    let mut new_id = vec![DEAD; nodes.len()];
    let mut order = vec![start];
    new_id[start as usize] = 1;
    let mut cursor = 0;
    while cursor < order.len() {
        for &(_, _, _, to) in out(order[cursor]) {
            if new_id[to as usize] == DEAD {
                order.push(to);
                new_id[to as usize] = order.len() as StateId;
            }
        }
        cursor += 1;
    }
    // Columns equal in every state share a class: compare their live cells, (state, target).
    let mut cells: Vec<Vec<(StateId, StateId)>> = vec![Vec::new(); columns];
    for (i, &node) in order.iter().enumerate() {
        for &(_, lo, hi, to) in out(node) {
            for column in column_of[lo as usize]..=column_of[hi as usize] {
                cells[column as usize].push((i as StateId + 1, new_id[to as usize]));
            }
        }
    }
    let mut group_of_cells: HashMap<&[(StateId, StateId)], u32> = HashMap::new();
    let group_of_column: Vec<u32> = cells
        .iter()
        .map(|c| {
            let next = group_of_cells.len() as u32;
            *group_of_cells.entry(c.as_slice()).or_insert(next)
        })
        .collect();
    let mut class_of_group: Vec<Option<u8>> = vec![None; columns];
    let mut class_count = 0usize;
    let mut classes = [0u8; 256];
    for (b, class) in classes.iter_mut().enumerate() {
        let group = group_of_column[column_of[b] as usize] as usize;
        *class = *class_of_group[group].get_or_insert_with(|| {
            class_count += 1;
            (class_count - 1) as u8
        });
    }
    let class_of_column: Vec<u8> =
        group_of_column.iter().map(|&g| class_of_group[g as usize].expect("every column holds a byte")).collect();
    let states = order.len() + 1;
    let mut transitions = vec![DEAD; states * class_count];
    let mut accepting = vec![false; states];
    for (i, &node) in order.iter().enumerate() {
        let id = i + 1;
        accepting[id] = nodes[node as usize].accepting;
        for &(_, lo, hi, to) in out(node) {
            for column in column_of[lo as usize]..=column_of[hi as usize] {
                transitions[id * class_count + class_of_column[column as usize] as usize] = new_id[to as usize];
            }
        }
    }
    ByteDfa { classes, class_count, transitions, accepting, start: 1 }
}

/// The live blocks in breadth-first order from the start's, following the transitions of each
/// block's `representative` column by column.
pub(super) fn breadth_first(raw: &RawDfa, block: &[u32], representative: &[usize]) -> Vec<u32> {
    let mut seen = vec![false; representative.len()];
    seen[0] = true;
    let start = block[raw.start as usize];
    seen[start as usize] = true;
    let mut order = vec![start];
    let mut cursor = 0;
    while cursor < order.len() {
        let s = representative[order[cursor] as usize];
        cursor += 1;
        for &t in raw.row(s) {
            let b = block[t as usize];
            if !seen[b as usize] {
                seen[b as usize] = true;
                order.push(b);
            }
        }
    }
    order
}

/// Byte classes of the minimal table, given each raw column's targets there (`row_targets(i,
/// out)` writes minimal row `i`'s target in every raw column): bytes whose columns agree in
/// every state share a class, numbered in order of their first byte. Returns the byte -> class
/// map and a raw column for each class.
pub(super) fn minimal_classes(
    raw: &RawDfa,
    rows: usize,
    row_targets: impl FnMut(usize, &mut [StateId]),
) -> ([u8; 256], Vec<usize>) {
    let ColumnMap::Classes(column_of) = &raw.column_of;
    let group_of_column = equal_columns(rows, raw.columns, row_targets);
    let mut class_of_group: Vec<Option<u8>> = vec![None; raw.columns];
    let mut class_columns: Vec<usize> = Vec::new();
    let mut classes = [0u8; 256];
    for (b, class) in classes.iter_mut().enumerate() {
        let column = column_of[b] as usize;
        *class = *class_of_group[group_of_column[column] as usize].get_or_insert_with(|| {
            class_columns.push(column);
            (class_columns.len() - 1) as u8
        });
    }
    (classes, class_columns)
}

/// The columns of a table that are equal in every row, as a group per column, groups numbered
/// in order of their first column. `fill_row(i, out)` writes row `i` (`columns` cells).
///
/// The table is read row by row, twice: once for a hash of each column, once to check that
/// columns with equal hashes are equal. Reading it column by column would miss the cache at
/// nearly every cell of a large table (rows are up to 1 KiB apart).
pub(super) fn equal_columns(rows: usize, columns: usize, mut fill_row: impl FnMut(usize, &mut [StateId])) -> Vec<u32> {
    let mut row = vec![DEAD; columns];
    let mut hashes = vec![0u64; columns];
    for i in 0..rows {
        fill_row(i, &mut row);
        for (hash, &cell) in hashes.iter_mut().zip(&row) {
            *hash = (hash.rotate_left(5) ^ u64::from(cell)).wrapping_mul(0x517C_C1B7_2722_0A95);
        }
    }
    // Each column's candidate: the first column with its hash.
    let mut first_with: HashMap<u64, usize> = HashMap::new();
    let candidate: Vec<usize> = hashes.iter().enumerate().map(|(c, &h)| *first_with.entry(h).or_insert(c)).collect();
    let mut collided = false;
    for i in 0..rows {
        fill_row(i, &mut row);
        collided |= candidate.iter().enumerate().any(|(c, &first)| row[c] != row[first]);
    }
    if collided {
        return equal_columns_by_value(rows, columns, fill_row);
    }
    let mut group = vec![0u32; columns];
    let mut groups = 0;
    for c in 0..columns {
        if candidate[c] == c {
            group[c] = groups;
            groups += 1;
        } else {
            group[c] = group[candidate[c]];
        }
    }
    group
}

/// [`equal_columns`] by comparing whole columns, for tables whose column hashes collide.
pub(super) fn equal_columns_by_value(
    rows: usize,
    columns: usize,
    mut fill_row: impl FnMut(usize, &mut [StateId]),
) -> Vec<u32> {
    let mut by_column = vec![Vec::with_capacity(rows); columns];
    let mut row = vec![DEAD; columns];
    for i in 0..rows {
        fill_row(i, &mut row);
        for (column, &cell) in by_column.iter_mut().zip(&row) {
            column.push(cell);
        }
    }
    let mut group_of: HashMap<&[StateId], u32> = HashMap::new();
    by_column
        .iter()
        .map(|column| {
            let next = group_of.len() as u32;
            *group_of.entry(column.as_slice()).or_insert(next)
        })
        .collect()
}
