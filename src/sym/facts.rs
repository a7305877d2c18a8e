//! Facts, as `check` teaches them: bounds and excluded values on linear forms, disjunctions,
//! and replacements, indexed by term and by symbol so that a query only touches facts about
//! its own terms. What a comparison implies about other forms is in implied.rs.
//!
//! Every comparison is canonically `form <relation> bound`, so one table keyed by form holds
//! everything known about `u0`, `u0 // 2` or `u0 + u1 + u2` alike: a comparison with a
//! constant narrows the form's range, `!=` excludes a value, and `a < b` is `b - a >= 1`,
//! which already implies `a <= b - 1` and `a != b`. Bounds on a bare symbol live in the
//! symbol's own range.

use super::env::ShapeEnv;
use super::node::{ExprId, FxHashMap, FxHashSet, Node, Relation};
use super::range::{NEG_INF, POS_INF, Range};
use super::symbol::SymbolId;

/// What is known about one linear form.
#[derive(Clone, Debug)]
pub(super) struct FormFacts {
    /// The form.
    pub form: ExprId,
    /// Bounds on the form's value (unused for a bare symbol, whose range holds them).
    pub bounds: Range,
    /// Values the form is known not to take, sorted.
    pub excluded: Vec<i64>,
    /// Extra bounds assumed only by size-oblivious queries (`u < N` after `check_size u, max = N`).
    pub oblivious: Range,
    /// False once a replacement rewrote the form; its facts then live on the rewritten form.
    pub live: bool,
    /// Whether the form is listed in [`Facts::bounding`] for its upper and its lower bound.
    indexed: [bool; 2],
}

impl FormFacts {
    fn new(form: ExprId) -> Self {
        FormFacts {
            form,
            bounds: Range::ALL,
            excluded: Vec::new(),
            oblivious: Range::ALL,
            live: true,
            indexed: [false; 2],
        }
    }
}

/// All facts of an environment.
#[derive(Clone, Debug, Default)]
pub(super) struct Facts {
    entries: Vec<FormFacts>,
    /// Index of each form's entry.
    forms: FxHashMap<ExprId, u32>,
    /// For a term and a sign, the facts that bound `sign*term` from above once oriented: each
    /// fact's entry and its coefficient on the term. Where linear reasoning looks.
    by_term: FxHashMap<(ExprId, bool), Vec<(u32, i64)>>,
    /// Whether a fact in `by_term` has a `min` or `max` term, whose arguments may bring any
    /// term into a linear search.
    extremum_terms: bool,
    /// Forms and disjunctions that mention a symbol: for explanations and replacements.
    by_symbol: Vec<Vec<ExprId>>,
    disjunctions: FxHashSet<ExprId>,
    /// Negations of known disjunctions: `not (a or b)` is known false.
    refuted: FxHashSet<ExprId>,
    by_disjunct: FxHashMap<ExprId, Vec<ExprId>>,
    replacements: Vec<Option<ExprId>>,
    /// For each symbol, the symbols whose replacement mentions it.
    replacement_users: Vec<Vec<SymbolId>>,
    replaced: usize,
}

impl Facts {
    pub(super) fn add_symbol(&mut self) {
        self.by_symbol.push(Vec::new());
        self.replacements.push(None);
        self.replacement_users.push(Vec::new());
    }

    pub(super) fn replacement(&self, symbol: SymbolId) -> Option<ExprId> {
        self.replacements.get(symbol.index()).copied().flatten()
    }

    pub(super) fn is_replaced(&self, symbol: SymbolId) -> bool {
        self.replacement(symbol).is_some()
    }

    pub(super) fn has_replacements(&self) -> bool {
        self.replaced > 0
    }

    pub(super) fn set_replacement(&mut self, symbol: SymbolId, expr: ExprId) {
        if self.replacements[symbol.index()].replace(expr).is_none() {
            self.replaced += 1;
        }
    }

    pub(super) fn retarget(&mut self, symbol: SymbolId, expr: ExprId) {
        self.replacements[symbol.index()] = Some(expr);
    }

    pub(super) fn add_replacement_user(&mut self, used: SymbolId, user: SymbolId) {
        self.replacement_users[used.index()].push(user);
    }

    pub(super) fn take_replacement_users(&mut self, symbol: SymbolId) -> Vec<SymbolId> {
        std::mem::take(&mut self.replacement_users[symbol.index()])
    }

    pub(super) fn take_symbol_facts(&mut self, symbol: SymbolId) -> Vec<ExprId> {
        std::mem::take(&mut self.by_symbol[symbol.index()])
    }

    /// The live facts that mention a symbol.
    pub(super) fn symbol_facts(&self, symbol: SymbolId) -> impl Iterator<Item = ExprId> + '_ {
        self.by_symbol[symbol.index()]
            .iter()
            .copied()
            .filter(|fact| self.is_live(*fact))
    }

    fn is_live(&self, fact: ExprId) -> bool {
        self.disjunctions.contains(&fact) || self.form(fact).is_some()
    }

    /// The facts on a form, if any are live.
    pub(super) fn form(&self, form: ExprId) -> Option<&FormFacts> {
        let &index = self.forms.get(&form)?;
        Some(&self.entries[index as usize]).filter(|facts| facts.live)
    }

    /// One entry, by index.
    pub(super) fn entry(&self, index: u32) -> &FormFacts {
        &self.entries[index as usize]
    }

    /// Learned bounds of a form (with the size-oblivious assumptions when asked).
    pub(super) fn form_bounds(&self, form: ExprId, oblivious: bool) -> Option<Range> {
        let facts = self.form(form)?;
        Some(if oblivious {
            facts.bounds.intersect(facts.oblivious)
        } else {
            facts.bounds
        })
    }

    pub(super) fn excluded(&self, form: ExprId) -> &[i64] {
        self.form(form).map_or(&[], |facts| &facts.excluded)
    }

    /// Facts of two or more terms that can bound `term` (`-term` when not `positive`) from
    /// above, with their coefficient on `term`; some may be retired.
    pub(super) fn bounding(&self, term: ExprId, positive: bool) -> &[(u32, i64)] {
        self.by_term
            .get(&(term, positive))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether a fact of two or more terms has a `min` or `max` term.
    pub(super) fn has_extremum_terms(&self) -> bool {
        self.extremum_terms
    }

    /// Whether any fact of two or more terms mentions `term`.
    pub(super) fn mentions(&self, term: ExprId) -> bool {
        !self.bounding(term, true).is_empty() || !self.bounding(term, false).is_empty()
    }

    pub(super) fn is_known_disjunction(&self, cond: ExprId) -> bool {
        self.disjunctions.contains(&cond)
    }

    pub(super) fn is_refuted(&self, cond: ExprId) -> bool {
        self.refuted.contains(&cond)
    }

    pub(super) fn disjunctions_with(&self, disjunct: ExprId) -> &[ExprId] {
        self.by_disjunct.get(&disjunct).map_or(&[], Vec::as_slice)
    }

    pub(super) fn forget_disjunction(&mut self, cond: ExprId) -> bool {
        self.disjunctions.remove(&cond)
    }

    /// Marks a form's facts as moved elsewhere and returns them.
    pub(super) fn retire_form(&mut self, form: ExprId) -> Option<FormFacts> {
        let &index = self.forms.get(&form)?;
        let facts = Some(&mut self.entries[index as usize]).filter(|facts| facts.live)?;
        facts.live = false;
        Some(facts.clone())
    }
}

impl ShapeEnv {
    /// Learns that `cond` holds (it has already been checked not to be false).
    pub(super) fn learn(&mut self, cond: ExprId) {
        let cond = self.resolve(cond);
        match self.arena.node(cond).clone() {
            Node::And(args) => args.iter().for_each(|&arg| self.learn(arg)),
            Node::Or(args) => self.learn_disjunction(cond, &args),
            Node::Compare {
                relation,
                form,
                bound,
            } => self.learn_relation(relation, form, bound),
            _ => {}
        }
    }

    /// Remembers `cond` as an extra assumption of size-oblivious queries only.
    pub(super) fn assume_when_oblivious(&mut self, cond: ExprId) {
        let cond = self.resolve(cond);
        if let Node::Compare {
            relation,
            form,
            bound,
        } = *self.arena.node(cond)
        {
            let range = match relation {
                Relation::Le => Range::at_most(bound),
                Relation::Ge => Range::at_least(bound),
                Relation::Eq => Range::exactly(bound),
                Relation::Ne => return,
            };
            let facts = self.form_entry(form);
            facts.oblivious = facts.oblivious.intersect(range);
            self.index_bounds(form);
            self.touch();
        }
    }

    fn learn_relation(&mut self, relation: Relation, form: ExprId, bound: i64) {
        match relation {
            Relation::Eq => {
                if self.try_replace(form, bound) {
                    return;
                }
                self.tighten(form, Range::exactly(bound));
            }
            Relation::Le => self.tighten(form, Range::at_most(bound)),
            Relation::Ge => self.tighten(form, Range::at_least(bound)),
            Relation::Ne => return self.exclude(form, bound),
        }
        self.learn_implied(relation, form, bound);
    }

    fn learn_disjunction(&mut self, cond: ExprId, args: &[ExprId]) {
        if !self.facts.disjunctions.insert(cond) {
            return;
        }
        for &symbol in &self.arena.data(cond).free {
            self.facts.by_symbol[symbol.index()].push(cond);
        }
        for &arg in args {
            self.facts.by_disjunct.entry(arg).or_default().push(cond);
        }
        if let Ok(negation) = self.not(cond) {
            self.facts.refuted.insert(negation);
        }
        self.touch();
    }

    /// What is known of a form's value: its symbol's range, or its learned bounds.
    fn known_range(&self, form: ExprId) -> Range {
        match self.arena.node(form) {
            Node::Symbol(symbol) => self.symbols[symbol.index()].range,
            _ => self
                .facts
                .form(form)
                .map_or(Range::ALL, |facts| facts.bounds),
        }
    }

    fn tighten(&mut self, form: ExprId, range: Range) {
        let current = self.known_range(form);
        let narrowed = self.skip_excluded(form, current.intersect(range));
        if narrowed == current {
            return;
        }
        if let Node::Symbol(symbol) = *self.arena.node(form) {
            self.symbols[symbol.index()].range = narrowed;
        } else {
            self.form_entry(form).bounds = narrowed;
            self.index_bounds(form);
        }
        self.touch();
        if let Some(value) = narrowed.constant() {
            self.try_replace(form, value);
        }
    }

    fn exclude(&mut self, form: ExprId, value: i64) {
        let excluded = self.facts.excluded(form);
        let Err(position) = excluded.binary_search(&value) else {
            return;
        };
        if !self.known_range(form).contains(value) {
            return;
        }
        self.form_entry(form).excluded.insert(position, value);
        self.touch();
        self.tighten(form, Range::ALL);
    }

    /// Moves range ends off excluded values.
    fn skip_excluded(&self, form: ExprId, mut range: Range) -> Range {
        let excluded = self.facts.excluded(form);
        let contains = |value: &i64| excluded.binary_search(value).is_ok();
        while range.finite_lo().is_some() && contains(&range.lo) && !range.is_empty() {
            let Some(next) = range.lo.checked_add(1) else {
                return Range::new(POS_INF, NEG_INF);
            };
            range.lo = next;
        }
        while range.finite_hi().is_some() && contains(&range.hi) && !range.is_empty() {
            let Some(next) = range.hi.checked_sub(1) else {
                return Range::new(POS_INF, NEG_INF);
            };
            range.hi = next;
        }
        range
    }

    /// The facts of a form, created and indexed on first use.
    fn form_entry(&mut self, form: ExprId) -> &mut FormFacts {
        let index = match self.facts.forms.get(&form) {
            Some(&index) => index,
            None => self.index_form(form),
        };
        let facts = &mut self.facts.entries[index as usize];
        facts.live = true;
        facts
    }

    fn index_form(&mut self, form: ExprId) -> u32 {
        let index = self.facts.entries.len() as u32;
        self.facts.entries.push(FormFacts::new(form));
        self.facts.forms.insert(form, index);
        let data = self.arena.data(form);
        for &symbol in &data.free {
            self.facts.by_symbol[symbol.index()].push(form);
        }
        index
    }

    /// Lists a form of several terms under each of its terms once its upper (lower) bound
    /// becomes finite in some mode.
    fn index_bounds(&mut self, form: ExprId) {
        let Some(&index) = self.facts.forms.get(&form) else {
            return;
        };
        let Node::Sum { terms, .. } = self.arena.node(form) else {
            return;
        };
        let entry = &mut self.facts.entries[index as usize];
        let (bounds, oblivious) = (entry.bounds, entry.oblivious);
        let finite = [
            bounds.finite_hi().or(oblivious.finite_hi()).is_some(),
            bounds.finite_lo().or(oblivious.finite_lo()).is_some(),
        ];
        for (side, finite) in finite.into_iter().enumerate() {
            if !finite || entry.indexed[side] {
                continue;
            }
            entry.indexed[side] = true;
            for &(term, coefficient) in terms {
                let extremum = matches!(self.arena.node(term), Node::Min(_) | Node::Max(_));
                self.facts.extremum_terms |= extremum;
                let positive = (coefficient > 0) == (side == 0);
                let list = self.facts.by_term.entry((term, positive)).or_default();
                list.push((index, coefficient));
            }
        }
    }

    /// `form == value` as a replacement of the form's latest symbol, when that symbol appears
    /// once, linearly, with coefficient ±1: an unbacked symbol is only ever replaced by
    /// backed symbols and earlier unbacked ones.
    fn try_replace(&mut self, form: ExprId, value: i64) -> bool {
        let latest = self.arena.data(form).free.iter().copied();
        let latest = latest.max_by_key(|symbol| self.symbols[symbol.index()].rank());
        let solved = latest.and_then(|symbol| Some((symbol, self.solve(form, symbol, value)?)));
        let Some((symbol, expr)) = solved else {
            return false;
        };
        self.set_replacement(symbol, expr);
        true
    }

    /// `symbol` from `form == value`, when it is a term of coefficient ±1 that no other term
    /// mentions: `symbol = sign * (value - rest)`.
    fn solve(&mut self, form: ExprId, symbol: SymbolId, value: i64) -> Option<ExprId> {
        let target = self.symbol_exprs[symbol.index()];
        let poly = self.poly(form);
        let (mut sign, mut rest) = (0, Vec::with_capacity(poly.terms.len()));
        for &(term, coefficient) in &poly.terms {
            if term == target {
                sign = coefficient;
            } else if self.arena.data(term).free.contains(&symbol) {
                return None;
            } else {
                rest.push((term, coefficient));
            }
        }
        if sign != 1 && sign != -1 {
            return None;
        }
        for (_, coefficient) in &mut rest {
            *coefficient = coefficient.checked_mul(-sign)?;
        }
        self.make_sum(rest, value.checked_mul(sign)?).ok()
    }
}
