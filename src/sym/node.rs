//! Hash-consed expression nodes: one arena per environment, every child created before its parent.
//!
//! Each node carries what the engine needs without walking it again: a deterministic sort key
//! (so output never depends on creation order), its depth, its free symbols, whether any of
//! them is unbacked, and its linear view `scale*form + constant`.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::symbol::SymbolId;

/// An interned integer or boolean expression of one [`ShapeEnv`](super::ShapeEnv).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub(super) u32);

impl ExprId {
    /// Position in the environment's arena (creation order).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The relation of a canonical comparison `form <relation> bound`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Relation {
    /// `form == bound`
    Eq,
    /// `form != bound`
    Ne,
    /// `form <= bound`
    Le,
    /// `form >= bound`
    Ge,
}

/// One canonical node. Integer nodes: `Int`, `Symbol`, `Sum`, `Product`, `FloorDiv`, `Mod`,
/// `Min`, `Max`; boolean nodes: `Bool`, `Compare`, `And`, `Or` (negation is always pushed into
/// comparisons, so there is no `Not`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Node {
    Int(i64),
    Bool(bool),
    Symbol(SymbolId),
    /// `Σ coefficient*term + constant`: monomial terms in canonical order, coefficients non-zero.
    Sum {
        terms: Box<[(ExprId, i64)]>,
        constant: i64,
    },
    /// `Π factor**exponent`: at least two factors, or one with exponent ≥ 2.
    Product(Box<[(ExprId, u32)]>),
    FloorDiv(ExprId, ExprId),
    Mod(ExprId, ExprId),
    Min(Box<[ExprId]>),
    Max(Box<[ExprId]>),
    /// `form <relation> bound`, `form` a linear form with gcd 1 and a positive first coefficient.
    Compare {
        relation: Relation,
        form: ExprId,
        bound: i64,
    },
    And(Box<[ExprId]>),
    Or(Box<[ExprId]>),
}

impl Node {
    /// Calls `visit` on every direct child.
    pub(super) fn for_each_child(&self, mut visit: impl FnMut(ExprId)) {
        match self {
            Node::Int(_) | Node::Bool(_) | Node::Symbol(_) => {}
            Node::Sum { terms, .. } => terms.iter().for_each(|&(term, _)| visit(term)),
            Node::Product(factors) => factors.iter().for_each(|&(factor, _)| visit(factor)),
            Node::FloorDiv(a, b) | Node::Mod(a, b) => {
                visit(*a);
                visit(*b);
            }
            Node::Min(args) | Node::Max(args) | Node::And(args) | Node::Or(args) => {
                args.iter().copied().for_each(visit);
            }
            Node::Compare { form, .. } => visit(*form),
        }
    }

    fn is_boolean(&self) -> bool {
        matches!(
            self,
            Node::Bool(_) | Node::Compare { .. } | Node::And(_) | Node::Or(_)
        )
    }

    /// Sort rank of the node's kind: symbols first, sums of atoms last.
    fn kind_rank(&self) -> u8 {
        match self {
            Node::Int(_) => 0,
            Node::Symbol(_) => 1,
            Node::Product(_) => 2,
            Node::FloorDiv(..) => 3,
            Node::Mod(..) => 4,
            Node::Min(_) => 5,
            Node::Max(_) => 6,
            Node::Sum { .. } => 7,
            Node::Bool(_) => 8,
            Node::Compare { .. } => 9,
            Node::And(_) => 10,
            Node::Or(_) => 11,
        }
    }
}

/// Deterministic order of nodes: by leading symbol, higher degree first, kind, then a
/// structural hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct SortKey {
    lead: u32,
    /// `u32::MAX - degree`, so that higher powers come first.
    lowness: u32,
    kind: u8,
    hash: u64,
}

impl SortKey {
    fn degree(self) -> u32 {
        u32::MAX - self.lowness
    }
}

/// An integer node read as `scale*form + constant`; `form` is `None` for constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Linear {
    pub form: Option<ExprId>,
    pub scale: i64,
    pub constant: i64,
}

/// A node and its cached summary.
#[derive(Clone, Debug)]
pub(super) struct NodeData {
    pub node: Node,
    pub key: SortKey,
    pub depth: u32,
    /// Number of nodes when written out as a tree (saturating): bounds work on shared DAGs.
    pub size: u32,
    /// Free symbols sorted by id.
    pub free: Free,
    pub unbacked: bool,
    pub boolean: bool,
    pub linear: Linear,
}

/// A node's free symbols, sorted: up to three inline, more on the heap.
#[derive(Clone, Debug)]
pub(super) enum Free {
    Inline { length: u8, symbols: [SymbolId; 3] },
    Heap(Box<[SymbolId]>),
}

impl Free {
    fn new(symbols: &[SymbolId]) -> Free {
        if symbols.len() > 3 {
            return Free::Heap(symbols.into());
        }
        let mut inline = [SymbolId(0); 3];
        inline[..symbols.len()].copy_from_slice(symbols);
        Free::Inline {
            length: symbols.len() as u8,
            symbols: inline,
        }
    }
}

impl std::ops::Deref for Free {
    type Target = [SymbolId];

    fn deref(&self) -> &[SymbolId] {
        match self {
            Free::Inline { length, symbols } => &symbols[..usize::from(*length)],
            Free::Heap(symbols) => symbols,
        }
    }
}

impl<'a> IntoIterator for &'a Free {
    type Item = &'a SymbolId;
    type IntoIter = std::slice::Iter<'a, SymbolId>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The interner: nodes in creation order, found again by hash. The map holds only the latest
/// node of each hash and nodes chain to earlier ones, so no node is stored twice.
#[derive(Clone, Debug, Default)]
pub(super) struct Arena {
    nodes: Vec<NodeData>,
    index: FxHashMap<u64, ExprId>,
    /// For each node, the previous node with the same hash.
    chain: Vec<Option<ExprId>>,
    /// Reused while merging children's free symbols.
    scratch: Vec<SymbolId>,
    /// The greatest depth of a node so far.
    deepest: u32,
}

impl Arena {
    pub(super) fn data(&self, id: ExprId) -> &NodeData {
        &self.nodes[id.index()]
    }

    pub(super) fn node(&self, id: ExprId) -> &Node {
        &self.nodes[id.index()].node
    }

    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(super) fn deepest(&self) -> usize {
        self.deepest as usize
    }

    /// Total order used for canonical argument lists.
    pub(super) fn order(&self, a: ExprId, b: ExprId) -> Ordering {
        self.data(a).key.cmp(&self.data(b).key).then(a.cmp(&b))
    }

    /// The node of a symbol; `rank` orders it among symbols.
    pub(super) fn intern_symbol(&mut self, symbol: SymbolId, rank: u32, unbacked: bool) -> ExprId {
        let node = Node::Symbol(symbol);
        if let Some(id) = self.find(&node) {
            return id;
        }
        let id = self.next_id();
        let key = SortKey {
            lead: rank,
            lowness: u32::MAX - 1,
            kind: node.kind_rank(),
            hash: mix(mix(SEED, 1), u64::from(rank)),
        };
        let linear = Linear {
            form: Some(id),
            scale: 1,
            constant: 0,
        };
        let shape = Shape { depth: 1, size: 1 };
        self.push(node, key, shape, Free::new(&[symbol]), unbacked, linear)
    }

    /// Interns a canonical node. `form` is the linear view of a sum that is not itself a
    /// normalized form: `(form, scale)`; `None` makes the node its own form.
    pub(super) fn intern(&mut self, node: Node, form: Option<(ExprId, i64)>) -> ExprId {
        if let Some(id) = self.find(&node) {
            return id;
        }
        let id = self.next_id();
        let (mut depth, mut size, mut unbacked, mut lead) = (0, 1u32, false, u32::MAX);
        let mut free = std::mem::take(&mut self.scratch);
        free.clear();
        node.for_each_child(|child| {
            let data = &self.nodes[child.index()];
            depth = depth.max(data.depth);
            size = size.saturating_add(data.size);
            unbacked |= data.unbacked;
            lead = lead.min(data.key.lead);
            free.extend_from_slice(&data.free);
        });
        free.sort_unstable();
        free.dedup();
        let key = SortKey {
            lead,
            lowness: u32::MAX - self.degree(&node),
            kind: node.kind_rank(),
            hash: self.structural_hash(&node),
        };
        let linear = linear_view(&node, id, form);
        let shape = Shape {
            depth: depth + 1,
            size,
        };
        let symbols = Free::new(&free);
        self.scratch = free;
        self.push(node, key, shape, symbols, unbacked, linear)
    }

    fn find(&self, node: &Node) -> Option<ExprId> {
        let mut cursor = self.index.get(&content_hash(node)).copied();
        while let Some(id) = cursor {
            if self.nodes[id.index()].node == *node {
                return Some(id);
            }
            cursor = self.chain[id.index()];
        }
        None
    }

    fn next_id(&self) -> ExprId {
        ExprId(u32::try_from(self.nodes.len()).expect("more than 2^32 expressions"))
    }

    fn push(
        &mut self,
        node: Node,
        key: SortKey,
        shape: Shape,
        free: Free,
        unbacked: bool,
        linear: Linear,
    ) -> ExprId {
        let id = self.next_id();
        let boolean = node.is_boolean();
        let previous = self.index.insert(content_hash(&node), id);
        self.chain.push(previous);
        self.deepest = self.deepest.max(shape.depth);
        self.nodes.push(NodeData {
            node,
            key,
            depth: shape.depth,
            size: shape.size,
            free,
            unbacked,
            boolean,
            linear,
        });
        id
    }

    fn degree(&self, node: &Node) -> u32 {
        match node {
            Node::Int(_) | Node::Bool(_) => 0,
            Node::Product(factors) => factors.iter().fold(0u32, |total, &(factor, exponent)| {
                let degree = self.data(factor).key.degree().max(1);
                total.saturating_add(degree.saturating_mul(exponent))
            }),
            _ => 1,
        }
    }

    /// A hash of the node's structure that does not depend on ids, so sorting by it is stable
    /// across construction orders.
    fn structural_hash(&self, node: &Node) -> u64 {
        let child = |id: ExprId| self.data(id).key.hash;
        let mut hash = mix(SEED, u64::from(node.kind_rank()));
        match node {
            Node::Int(value) => hash = mix(hash, *value as u64),
            Node::Bool(value) => hash = mix(hash, u64::from(*value)),
            Node::Symbol(symbol) => hash = mix(hash, u64::from(symbol.0)),
            Node::Sum { terms, constant } => {
                for &(term, coefficient) in terms {
                    hash = mix(mix(hash, child(term)), coefficient as u64);
                }
                hash = mix(hash, *constant as u64);
            }
            Node::Product(factors) => {
                for &(factor, exponent) in factors {
                    hash = mix(mix(hash, child(factor)), u64::from(exponent));
                }
            }
            Node::FloorDiv(a, b) | Node::Mod(a, b) => hash = mix(mix(hash, child(*a)), child(*b)),
            Node::Min(args) | Node::Max(args) | Node::And(args) | Node::Or(args) => {
                for &arg in args {
                    hash = mix(hash, child(arg));
                }
            }
            Node::Compare {
                relation,
                form,
                bound,
            } => {
                hash = mix(mix(hash, *relation as u64), child(*form));
                hash = mix(hash, *bound as u64);
            }
        }
        hash
    }
}

/// Depth and tree size of a new node.
#[derive(Clone, Copy)]
struct Shape {
    depth: u32,
    size: u32,
}

fn linear_view(node: &Node, id: ExprId, form: Option<(ExprId, i64)>) -> Linear {
    match node {
        Node::Int(value) => Linear {
            form: None,
            scale: 0,
            constant: *value,
        },
        Node::Sum { constant, .. } => {
            let (form, scale) = form.unwrap_or((id, 1));
            Linear {
                form: Some(form),
                scale,
                constant: *constant,
            }
        }
        _ => Linear {
            form: Some(id),
            scale: 1,
            constant: 0,
        },
    }
}

/// Hash of a node's content (ids included), for interning.
fn content_hash(node: &Node) -> u64 {
    let mut hasher = FxHasher::default();
    node.hash(&mut hasher);
    hasher.finish()
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

fn mix(hash: u64, value: u64) -> u64 {
    (hash.rotate_left(5) ^ value).wrapping_mul(SEED)
}

/// The Fx hash (as in rustc): fast and deterministic, for maps keyed by ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.hash = mix(self.hash, u64::from(byte));
        }
    }

    fn write_u8(&mut self, value: u8) {
        self.hash = mix(self.hash, u64::from(value));
    }

    fn write_u32(&mut self, value: u32) {
        self.hash = mix(self.hash, u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.hash = mix(self.hash, value);
    }

    fn write_i64(&mut self, value: i64) {
        self.hash = mix(self.hash, value as u64);
    }

    fn write_usize(&mut self, value: usize) {
        self.hash = mix(self.hash, value as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with the Fx hash.
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with the Fx hash.
pub(super) type FxHashSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;
