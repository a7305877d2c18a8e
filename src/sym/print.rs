//! Printing in TSL syntax: deterministic, with only the parentheses that precedence needs.
//!
//! Sums print their terms in canonical order (backed symbols before unbacked, then by number),
//! constant last: `s0 - 1`, `2*u0 + u1 // 2`. Comparisons print positive terms on the left and
//! move the others right: `2*u0 == 3*u1`; an inequality with terms on both sides reads as
//! `<` or `<=` (`u0 <= s0`), and uses the strict form when that makes the constant smaller
//! (`s0 > 2` rather than `s0 >= 3`). Very large expressions are cut
//! with `…` after [`NODE_BUDGET`] nodes.

use std::fmt::{self, Write};

use super::env::ShapeEnv;
use super::node::{ExprId, Node, Relation};

/// Most nodes printed for one expression.
const NODE_BUDGET: usize = 2_000;

// Precedence levels, loosest first (spec §3).
const OR: u8 = 1;
const AND: u8 = 2;
const COMPARE: u8 = 4;
const ADD: u8 = 5;
const MUL: u8 = 6;
const UNARY: u8 = 7;
const POW: u8 = 8;
const ATOM: u8 = 9;

/// An expression ready to print with `{}`.
#[derive(Clone, Copy)]
pub struct Show<'a> {
    env: &'a ShapeEnv,
    expr: ExprId,
}

impl fmt::Display for Show<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Printer::new(self.env, f).expr(self.expr, 0)
    }
}

impl ShapeEnv {
    /// The expression in TSL syntax.
    pub fn display(&self, expr: ExprId) -> String {
        self.show(expr).to_string()
    }

    /// A `Display` adaptor that prints the expression without building a `String` first.
    pub fn show(&self, expr: ExprId) -> Show<'_> {
        Show { env: self, expr }
    }

    /// `form <relation> bound` in TSL syntax, without building the node.
    pub(super) fn display_relation(&self, relation: Relation, form: ExprId, bound: i64) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = Printer::new(self, &mut text).compare(relation, form, bound);
        text
    }
}

/// A term of one side of a comparison: a monomial and its positive coefficient.
type SideTerm = (ExprId, u128);

struct Printer<'a, W: Write> {
    env: &'a ShapeEnv,
    out: &'a mut W,
    budget: usize,
}

impl<'a, W: Write> Printer<'a, W> {
    fn new(env: &'a ShapeEnv, out: &'a mut W) -> Self {
        Printer {
            env,
            out,
            budget: NODE_BUDGET,
        }
    }

    fn node(&self, expr: ExprId) -> &'a Node {
        self.env.arena.node(expr)
    }

    fn expr(&mut self, expr: ExprId, min_precedence: u8) -> fmt::Result {
        if self.budget == 0 {
            return self.out.write_char('…');
        }
        self.budget -= 1;
        if self.precedence(expr) < min_precedence {
            self.out.write_char('(')?;
            self.body(expr)?;
            self.out.write_char(')')
        } else {
            self.body(expr)
        }
    }

    fn precedence(&self, expr: ExprId) -> u8 {
        match self.node(expr) {
            Node::Int(value) if *value < 0 => UNARY,
            Node::Int(_) | Node::Bool(_) | Node::Symbol(_) | Node::Min(_) | Node::Max(_) => ATOM,
            Node::Sum { terms, constant } => match (terms.as_ref(), constant) {
                ([(_, coefficient)], 0) if *coefficient < 0 => UNARY,
                ([_], 0) => MUL,
                _ => ADD,
            },
            Node::Product(factors) if factors.len() == 1 => POW,
            Node::Product(_) | Node::FloorDiv(..) | Node::Mod(..) => MUL,
            Node::Compare { .. } => COMPARE,
            Node::And(_) => AND,
            Node::Or(_) => OR,
        }
    }

    fn body(&mut self, expr: ExprId) -> fmt::Result {
        match self.node(expr) {
            Node::Int(value) => write!(self.out, "{value}"),
            Node::Bool(value) => write!(self.out, "{value}"),
            Node::Symbol(symbol) => write!(self.out, "{}", self.env.symbol(*symbol).name()),
            Node::Sum { terms, constant } => self.sum(terms, *constant),
            Node::Product(factors) => {
                for (index, &(factor, exponent)) in factors.iter().enumerate() {
                    if index > 0 {
                        self.out.write_char('*')?;
                    }
                    self.factor(factor, exponent)?;
                }
                Ok(())
            }
            Node::FloorDiv(a, b) => self.binary(*a, " // ", *b),
            Node::Mod(a, b) => self.binary(*a, " % ", *b),
            Node::Min(args) => self.extremum("min", args),
            Node::Max(args) => self.extremum("max", args),
            Node::Compare {
                relation,
                form,
                bound,
            } => self.compare(*relation, *form, *bound),
            Node::And(args) => self.joined(args, " and ", AND + 1),
            Node::Or(args) => self.joined(args, " or ", OR + 1),
        }
    }

    fn binary(&mut self, a: ExprId, op: &str, b: ExprId) -> fmt::Result {
        self.expr(a, MUL)?;
        self.out.write_str(op)?;
        self.expr(b, UNARY)
    }

    fn joined(&mut self, args: &[ExprId], separator: &str, precedence: u8) -> fmt::Result {
        for (index, &arg) in args.iter().enumerate() {
            if index > 0 {
                self.out.write_str(separator)?;
            }
            self.expr(arg, precedence)?;
        }
        Ok(())
    }

    /// `min(a, min(b, c))`: the language's `min` and `max` take two arguments.
    fn extremum(&mut self, name: &str, args: &[ExprId]) -> fmt::Result {
        let Some((first, rest)) = args.split_first() else {
            return Ok(());
        };
        if rest.is_empty() {
            return self.expr(*first, 0);
        }
        write!(self.out, "{name}(")?;
        self.expr(*first, 0)?;
        self.out.write_str(", ")?;
        self.extremum(name, rest)?;
        self.out.write_char(')')
    }

    fn factor(&mut self, factor: ExprId, exponent: u32) -> fmt::Result {
        if exponent == 1 {
            return self.expr(factor, UNARY);
        }
        self.expr(factor, ATOM)?;
        write!(self.out, "**{exponent}")
    }

    /// A monomial after a coefficient or a unary minus: `//` and `%` need parentheses there.
    fn monomial(&mut self, term: ExprId) -> fmt::Result {
        let divides = matches!(self.node(term), Node::FloorDiv(..) | Node::Mod(..));
        self.expr(term, if divides { UNARY } else { MUL })
    }

    fn sum(&mut self, terms: &[(ExprId, i64)], constant: i64) -> fmt::Result {
        for (index, &(term, coefficient)) in terms.iter().enumerate() {
            let magnitude = coefficient.unsigned_abs();
            match (index, coefficient < 0) {
                (0, true) => self.out.write_char('-')?,
                (0, false) => {}
                (_, true) => self.out.write_str(" - ")?,
                (_, false) => self.out.write_str(" + ")?,
            }
            if magnitude != 1 {
                write!(self.out, "{magnitude}*")?;
                self.monomial(term)?;
            } else if index == 0 && coefficient < 0 {
                self.monomial(term)?;
            } else {
                self.expr(term, MUL)?;
            }
        }
        self.constant_tail(i128::from(constant))
    }

    fn constant_tail(&mut self, constant: i128) -> fmt::Result {
        match constant {
            0 => Ok(()),
            c if c > 0 => write!(self.out, " + {c}"),
            c => write!(self.out, " - {}", c.unsigned_abs()),
        }
    }

    /// One side of a comparison: positive terms and a constant.
    fn side(&mut self, terms: &[SideTerm], constant: i128) -> fmt::Result {
        if terms.is_empty() {
            return write!(self.out, "{constant}");
        }
        for (index, &(term, coefficient)) in terms.iter().enumerate() {
            if index > 0 {
                self.out.write_str(" + ")?;
            }
            if coefficient == 1 {
                self.expr(term, MUL)?;
            } else {
                write!(self.out, "{coefficient}*")?;
                self.monomial(term)?;
            }
        }
        self.constant_tail(constant)
    }

    fn compare(&mut self, relation: Relation, form: ExprId, bound: i64) -> fmt::Result {
        let terms: Vec<(ExprId, i128)> = match self.node(form) {
            Node::Sum { terms, .. } => terms.iter().map(|&(t, c)| (t, i128::from(c))).collect(),
            _ => vec![(form, 1)],
        };
        let bound = i128::from(bound);
        match relation {
            Relation::Eq | Relation::Ne => {
                let op = if relation == Relation::Eq {
                    " == "
                } else {
                    " != "
                };
                let (positive, negative) = split(&terms, 1);
                if !negative.is_empty() && bound < 0 {
                    self.equation(&negative, op, &positive, -bound)
                } else {
                    self.equation(&positive, op, &negative, bound)
                }
            }
            Relation::Le | Relation::Ge => self.inequality(relation, &terms, bound),
        }
    }

    fn equation(
        &mut self,
        left: &[SideTerm],
        op: &str,
        right: &[SideTerm],
        bound: i128,
    ) -> fmt::Result {
        self.side(left, 0)?;
        self.out.write_str(op)?;
        self.side(right, bound)
    }

    /// Terms on both sides print as `<` or `<=`; otherwise the terms stay left. The
    /// strictness that gives the smaller constant wins.
    fn inequality(
        &mut self,
        relation: Relation,
        terms: &[(ExprId, i128)],
        bound: i128,
    ) -> fmt::Result {
        let mixed = terms.iter().any(|&(_, c)| c < 0);
        let flip = mixed && relation == Relation::Ge;
        let sign = if flip { -1 } else { 1 };
        let (positive, negative) = split(terms, sign);
        let bound = sign * bound;
        let upper = (relation == Relation::Le) != flip;
        let (loose, strict, strict_bound) = if upper {
            (" <= ", " < ", bound + 1)
        } else {
            (" >= ", " > ", bound - 1)
        };
        let (op, bound) = if strict_bound.abs() < bound.abs() {
            (strict, strict_bound)
        } else {
            (loose, bound)
        };
        self.equation(&positive, op, &negative, bound)
    }
}

/// The terms of `sign * form` with positive coefficients, and the others negated.
fn split(terms: &[(ExprId, i128)], sign: i128) -> (Vec<SideTerm>, Vec<SideTerm>) {
    let mut positive = Vec::new();
    let mut negative = Vec::new();
    for &(term, coefficient) in terms {
        let coefficient = sign * coefficient;
        let side = if coefficient > 0 {
            &mut positive
        } else {
            &mut negative
        };
        side.push((term, coefficient.unsigned_abs()));
    }
    (positive, negative)
}
