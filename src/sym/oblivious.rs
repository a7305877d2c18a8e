//! Size-oblivious simplification: a question rebuilt with the rewrite rules reading
//! size-oblivious ranges, so that the assumption reaches inside `min`, `max`, `//` and `%`.
//!
//! Ranges alone lose the link between an atom and its arguments: for a size-like `u`,
//! `max(u, 1) == u` is `u - max(u, 1) == 0`, whose range is unbounded even when `u >= 2` is
//! assumed. Rebuilt under the assumption, `max(u, 1)` is `u` and the question is `true`. The
//! rebuilt expression holds only where the assumption does, so it answers size-oblivious
//! questions and nothing else: no cache keeps it (rules keep no memo, and the question is
//! resolved before it is rebuilt, so no stale resolution is rebuilt meanwhile).

use super::env::ShapeEnv;
use super::node::{ExprId, FxHashMap, FxHashSet, Node};

impl ShapeEnv {
    /// `cond` (resolved) rebuilt with the size-oblivious assumption inside its atoms; `None`
    /// when nothing changes or the rebuild fails.
    pub(super) fn oblivious_rewrite(&mut self, cond: ExprId) -> Option<ExprId> {
        let nodes = self.nodes_under(cond);
        if !nodes.iter().any(|&node| self.reads_ranges(node)) {
            return None;
        }
        let mut rebuilt: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        self.oblivious_rules = true;
        for node in nodes {
            let changed = self.children_changed(node, &rebuilt);
            if !changed && !self.reads_ranges(node) {
                continue;
            }
            let child = |_: &Self, id: ExprId| rebuilt.get(&id).copied().unwrap_or(id);
            let Ok(new) = self.rebuild(node, child) else {
                self.oblivious_rules = false;
                return None;
            };
            if new != node {
                rebuilt.insert(node, new);
            }
        }
        self.oblivious_rules = false;
        rebuilt.get(&cond).copied()
    }

    /// Every node of the expression, children before parents.
    fn nodes_under(&self, root: ExprId) -> Vec<ExprId> {
        let mut seen = FxHashSet::default();
        seen.insert(root);
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            self.arena.node(node).for_each_child(|child| {
                if seen.insert(child) {
                    stack.push(child);
                }
            });
        }
        let mut nodes: Vec<ExprId> = seen.into_iter().collect();
        nodes.sort_unstable();
        nodes
    }

    /// Atoms whose rules read ranges.
    fn reads_ranges(&self, node: ExprId) -> bool {
        matches!(
            self.arena.node(node),
            Node::Min(_) | Node::Max(_) | Node::FloorDiv(..) | Node::Mod(..)
        )
    }

    fn children_changed(&self, node: ExprId, rebuilt: &FxHashMap<ExprId, ExprId>) -> bool {
        let mut changed = false;
        self.arena
            .node(node)
            .for_each_child(|child| changed |= rebuilt.contains_key(&child));
        changed
    }
}
