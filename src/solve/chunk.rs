//! One chunk of one pass, computed: the init tables, or the words a step's mover reaches,
//! then combined with the previous table of the chain. Tables travel by name
//! ([`ChunkTables`]), in the order of the pass's [`PassSpec`](super::PassSpec).

use super::captures::Captures;
use super::frame::Frame;
use super::init::PushTargets;
use super::pass::{Pass, WorkTable};
use super::{init, kernels};

/// A chunk's words of some work tables, each under its name: what a pass reads whole, or
/// what it writes. (A pass reads and writes at most four tables: a list beats a map.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkTables {
    tables: Vec<(WorkTable, Vec<u64>)>,
}

impl ChunkTables {
    pub fn new() -> ChunkTables {
        ChunkTables::default()
    }

    /// Adds (or replaces) a table's words.
    pub fn insert(&mut self, table: WorkTable, words: Vec<u64>) {
        match self.tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, w)) => *w = words,
            None => self.tables.push((table, words)),
        }
    }

    /// A table's words. Panics if the chunk lacks the table: which tables a pass reads
    /// and writes is fixed by its spec, so a missing one is a bug.
    pub fn words(&self, table: WorkTable) -> &[u64] {
        self.get(table).unwrap_or_else(|| panic!("chunk without table {table}"))
    }

    /// A table's words, mutable (see [`ChunkTables::words`]).
    pub fn words_mut(&mut self, table: WorkTable) -> &mut [u64] {
        match self.tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, w)) => w,
            None => panic!("chunk without table {table}"),
        }
    }

    pub fn get(&self, table: WorkTable) -> Option<&[u64]> {
        self.tables.iter().find(|(t, _)| *t == table).map(|(_, w)| w.as_slice())
    }

    /// Takes a table's words out (see [`ChunkTables::words`]).
    pub fn take(&mut self, table: WorkTable) -> Vec<u64> {
        let i = self.tables.iter().position(|(t, _)| *t == table);
        let i = i.unwrap_or_else(|| panic!("chunk without table {table}"));
        self.tables.remove(i).1
    }
}

impl FromIterator<(WorkTable, Vec<u64>)> for ChunkTables {
    fn from_iter<I: IntoIterator<Item = (WorkTable, Vec<u64>)>>(iter: I) -> ChunkTables {
        let mut out = ChunkTables::new();
        for (t, w) in iter {
            out.insert(t, w);
        }
        out
    }
}

/// The conversions of an eventual level: the sub-endgames' bitbases of positions won with or
/// without the 50-move rule, and the same for the levels above that pawn pushes reach.
pub struct Eventual<'a> {
    pub caps: &'a Captures,
    pub pushes: PushTargets<'a>,
}

/// Where the init passes look up the positions their conversions (captures, promotions,
/// pawn pushes) lead to.
pub struct Conversions<'a> {
    /// The sub-endgames' final bitbases.
    pub caps: &'a Captures,
    /// The words of the slices the mover's pawn pushes lead to (none without pawns).
    pub pushes: &'a PushTargets<'a>,
    /// For an eventual level (see [`PassSpec`](super::PassSpec)): the positions won with
    /// or without the rule.
    pub eventual: Option<&'a Eventual<'a>>,
}

/// Computes one chunk of a pass from its chunk-local inputs (the tables its spec reads
/// whole): the init tables, or the words that the side to move reaches (white: OR over
/// moves; black: AND over moves), under the step's output table. The init passes also read
/// the final words of the slices the mover's pawn pushes lead to, and with `eventual` they
/// also write `c∞` or `d∞`.
pub fn compute_chunk(
    pass: Pass,
    frame: &Frame,
    conversions: &Conversions,
    words: usize,
    mut inputs: ChunkTables,
) -> ChunkTables {
    let Conversions { caps, pushes, eventual } = *conversions;
    let mut out = ChunkTables::new();
    match pass {
        Pass::InitWhite => {
            let mut illegal = vec![!0u64; words];
            let mut c = vec![0u64; words];
            init::init_white(frame, caps, pushes, &mut illegal, &mut c);
            let mut illegal_btm = vec![!0u64; words];
            init::illegal_btm(frame, &mut illegal_btm);
            out.insert(WorkTable::IllegalWtm, illegal);
            out.insert(WorkTable::WinningCapture, c);
            out.insert(WorkTable::IllegalBtm, illegal_btm);
            if let Some(e) = eventual {
                let mut c_inf = vec![0u64; words];
                init::init_white(frame, e.caps, &e.pushes, &mut vec![!0u64; words], &mut c_inf);
                out.insert(WorkTable::WinningCaptureEventual, c_inf);
            }
        }
        Pass::InitBlack => {
            let illegal_wtm = inputs.take(WorkTable::IllegalWtm);
            let mut d = vec![!0u64; words];
            kernels::black_moves(frame, &illegal_wtm, &mut d);
            drop(illegal_wtm);
            let mut t0 = vec![0u64; words];
            // Before `init_black`, `d` holds the positions without a legal quiet move.
            let mut forced = d.clone();
            let mut d_inf = eventual.map(|_| d.clone());
            init::init_black(frame, caps, pushes, &mut d, &mut t0);
            for (f, &d) in forced.iter_mut().zip(&d) {
                *f &= d;
            }
            out.insert(WorkTable::CapturesLose, d);
            out.insert(WorkTable::Chain(0), t0);
            out.insert(WorkTable::ForcedZeroing, forced);
            if let (Some(e), Some(mut d_inf)) = (eventual, d_inf.take()) {
                init::init_black(frame, e.caps, &e.pushes, &mut d_inf, &mut vec![0u64; words]);
                out.insert(WorkTable::CapturesLoseEventual, d_inf);
            }
        }
        Pass::Step(k) if k % 2 == 1 => {
            let mut reached = vec![0u64; words];
            kernels::white_moves(frame, inputs.words(WorkTable::chain(k as i32 - 1)), &mut reached);
            out.insert(WorkTable::Chain(k), reached);
        }
        Pass::Step(k) => {
            // With `t(k-2)` among the inputs, the kernel starts from the positions it leaves
            // undecided and skips the words where none is left (the new positions are the
            // same: `reached & !t(k-2)`); `t(k-2)` then goes on to the combine.
            let previous = WorkTable::chain(k as i32 - 2);
            let old = inputs.get(previous).is_some().then(|| inputs.take(previous));
            let mut reached = match &old {
                Some(old) => old.iter().map(|&o| !o).collect(),
                None => vec![!0u64; words],
            };
            kernels::black_moves(frame, inputs.words(WorkTable::chain(k as i32 - 1)), &mut reached);
            out.insert(WorkTable::Chain(k), reached);
            if let Some(old) = old {
                out.insert(previous, old);
            }
        }
    }
    out
}

/// `E_k` in one chunk (`docs/CURSED.md` part 2) by the kernels, for a set `E_(k-1)` of many
/// positions there (`e_prev`; `generate::edge` follows a few positions one by one): the new
/// positions of step `k` (`new_k`) that need one ply less than the step, given, for even `k`,
/// the new positions of step `k-1` (`new_prev`). Odd `k`: those with a white quiet move into
/// `E_(k-1)`; even `k`: those whose every black quiet move avoids `new_(k-1) & !E_(k-1)`. The
/// kernels skip the configurations with nothing to do (the sets are sparse).
pub fn edge_chunk(frame: &Frame, e_prev: &[u64], new_prev: Option<&[u64]>, new_k: &[u64]) -> Vec<u64> {
    let words = e_prev.len();
    let mut edge = match new_prev {
        None => {
            let mut out = vec![0u64; words];
            kernels::white_moves_sparse(frame, e_prev, &mut out);
            out
        }
        Some(new_prev) => {
            let avoid: Vec<u64> = new_prev.iter().zip(e_prev).map(|(&n, &e)| !(n & !e)).collect();
            let mut out = vec![!0u64; words];
            kernels::black_moves_at(frame, &avoid, &mut out, new_k);
            out
        }
    };
    for (e, &n) in edge.iter_mut().zip(new_k) {
        *e &= n;
    }
    edge
}

/// What a step's kernel words are combined with besides the previous table of its chain
/// (`old`), by the tables of its [`PassSpec`](super::PassSpec) after that one.
#[derive(Clone, Copy, Debug)]
pub enum Extra<'a> {
    /// Nothing: `old | out`, new `out & !old` (odd steps, and even steps from 4 on, whose
    /// `old` holds `!d` already).
    None,
    /// `c` (step 1) or `c∞` (step 103 of an eventual level), ORed into what white reached.
    Or(&'a [u64]),
    /// `d` at step 2, where it enters the even chain: black's new positions are those whose
    /// captures lose too, and the table gains `!d`, the positions a capture saves.
    Enter(&'a [u64]),
    /// `d` and `d∞` at step 102 of an eventual level: `d∞` takes `d`'s place in the chain
    /// (`old & d` is the seed's `t100`).
    Reenter(&'a [u64], &'a [u64]),
}

impl<'a> Extra<'a> {
    /// The extra tables of a step, in its spec's order after the previous table of the chain.
    pub fn of(k: u16, extra: &[&'a [u64]]) -> Extra<'a> {
        match (k % 2, extra) {
            (_, []) => Extra::None,
            (1, [c]) => Extra::Or(c),
            (0, [d]) => Extra::Enter(d),
            (0, [d, d_inf]) => Extra::Reenter(d, d_inf),
            _ => panic!("step {k} with {} extra tables", extra.len()),
        }
    }
}

/// [`Extra`]'s rule over a block: `table` holds the pass's reached words and becomes the new
/// table, `old` holds the previous table of the chain and becomes the new positions; the
/// extra tables are as long as the others. One plain loop per kind, so that each vectorises.
pub fn combine_words(table: &mut [u64], old: &mut [u64], extra: Extra) {
    let pairs = table.iter_mut().zip(old.iter_mut());
    match extra {
        Extra::None => pairs.for_each(|(t, o)| (*t, *o) = (*o | *t, *t & !*o)),
        Extra::Or(c) => pairs.zip(c).for_each(|((t, o), &c)| (*t, *o) = (*o | *t | c, (*t | c) & !*o)),
        Extra::Enter(d) => pairs.zip(d).for_each(|((t, o), &d)| (*t, *o) = (*o | *t | !d, *t & d & !*o)),
        Extra::Reenter(d, d_inf) => pairs.zip(d).zip(d_inf).for_each(|(((t, o), &d), &e)| {
            let lost = *o & d;
            (*t, *o) = (lost | *t | !e, *t & e & !lost)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_steps_or_their_extra_table_in_and_d_enters_the_even_chain() {
        let run = |k: u16, out: u64, old: u64, extra: &[&[u64]]| {
            let (mut t, mut o) = (vec![out], vec![old]);
            combine_words(&mut t, &mut o, Extra::of(k, extra));
            (t[0], o[0])
        };
        // Odd: what white reached or `c`, over the previous table.
        assert_eq!(run(103, 0b0011, 0b0001, &[&[0b0100]]), (0b0111, 0b0110));
        assert_eq!(run(5, 0b0011, 0b0001, &[]), (0b0011, 0b0010));
        // Step 2: new are the reached positions in `d` not in t0; the table gains `!d`.
        let d = !0b1000u64 & !0b0100;
        assert_eq!(run(2, 0b1011, 0b0001, &[&[d]]), (!d | 0b1011, 0b0010));
        // Later even steps: the table holds `!d` already, new are the reached ones not in it.
        assert_eq!(run(4, 0b1011, !d | 0b0001, &[]), (!d | 0b1011, 0b0010));
        // Step 102: `old & d` is t100; new are reached in `d∞` not in t100; the table gains `!d∞`.
        let d_inf = d | 0b1000;
        assert_eq!(run(102, 0b1011, !d | 0b0001, &[&[d], &[d_inf]]), (!d_inf | 0b1011, 0b1010));
    }

    #[test]
    fn chunk_tables_are_found_by_name_in_insertion_order() {
        let mut t: ChunkTables =
            [(WorkTable::Chain(3), vec![1]), (WorkTable::IllegalWtm, vec![2])].into_iter().collect();
        assert_eq!(t.words(WorkTable::IllegalWtm), [2]);
        t.insert(WorkTable::Chain(3), vec![5]);
        assert_eq!(t.words(WorkTable::Chain(3)), [5]);
        assert_eq!(t.take(WorkTable::Chain(3)), vec![5]);
        assert_eq!(t.get(WorkTable::Chain(3)), None);
        assert_eq!(t.take(WorkTable::IllegalWtm), vec![2]);
        assert_eq!(t, ChunkTables::new());
    }
}
