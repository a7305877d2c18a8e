//! The generator's steps for the day-one builtins: sorting, `masked_fill`, `isnan`/`isinf`,
//! `~`, `var`/`std` and reductions over several dims.

use rand::RngExt;
use rand::seq::IndexedRandom;

use super::{DType, Generator, Size, Var};

impl Generator {
    /// `sort`, `argsort` and `topk`, whose `k` may be the count read from data.
    pub(super) fn sorting(&mut self) -> bool {
        let Some(x) = self.pick(|var| !var.shape.is_empty()) else {
            return false;
        };
        let descending = self.rng.random_bool(0.5);
        // Positions of a computed float are its values instead (see `exact_everywhere`).
        let exact = crate::exact_everywhere(&x);
        match self.rng.random_range(0..3) {
            1 if !exact => self.bind(
                format!("{}.sort(dim = -1, descending = {descending})[0]", x.name),
                x.dtype,
                x.shape,
            ),
            0 => self.bind(
                format!("{}.sort(dim = 0, descending = {descending})[0]", x.name),
                x.dtype,
                x.shape,
            ),
            1 => self.bind(
                format!("argsort({}, -1, {descending})", x.name),
                DType::I64,
                x.shape,
            ),
            _ if x.shape[0] == Size::N => {
                let k = self.count();
                let mut shape = x.shape.clone();
                shape[0] = self.own_size();
                let output = usize::from(self.rng.random_bool(0.3) && exact);
                let dtype = if output == 1 { DType::I64 } else { x.dtype };
                self.bind(
                    format!("{}.topk({k}, 0, largest = {descending})[{output}]", x.name),
                    dtype,
                    shape,
                );
            }
            _ => return false,
        }
        true
    }

    /// `masked_fill`, `isnan`/`isinf` of values that may be infinite or NaN, and `~`.
    pub(super) fn day_one_elementwise(&mut self) -> bool {
        let float = |var: &Var| var.dtype == DType::F32;
        let Some(x) = self.pick(float) else {
            return false;
        };
        let c = self.constant();
        match self.rng.random_range(0..3) {
            0 => {
                let same = |var: &Var| var.dtype == DType::Bool && var.shape == x.shape;
                let mask = match self.pick(same) {
                    Some(p) => p.name,
                    None => format!("({} > {c})", x.name),
                };
                let value = self.constant();
                self.bind(
                    format!("{}.masked_fill({mask}, {value})", x.name),
                    DType::F32,
                    x.shape,
                );
            }
            1 => {
                // x / (x - c) is infinite or NaN where x == c.
                let ratio = format!("({x} / ({x} - {c}))", x = x.name);
                let expr = if self.rng.random_bool(0.5) {
                    format!("isnan({ratio}) | {ratio}.isinf()")
                } else {
                    format!("~isinf({ratio})")
                };
                self.bind(expr, DType::Bool, x.shape);
            }
            _ => {
                let Some(p) = self.pick(|var| var.dtype == DType::Bool) else {
                    return false;
                };
                self.bind(format!("~{}", p.name), DType::Bool, p.shape);
            }
        }
        true
    }

    /// `var`/`std` and reductions over several dims of a 2-d value.
    pub(super) fn statistics(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.dtype != DType::Bool && var.shape.len() == 2) else {
            return false;
        };
        let keep = self.rng.random_bool(0.3);
        let reduced = if keep {
            vec![Size::One, Size::One]
        } else {
            Vec::new()
        };
        if x.dtype == DType::F32 && self.rng.random_bool(0.5) {
            let op = ["var", "std"]
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("var");
            if self.rng.random_bool(0.5) {
                let mut shape = x.shape.clone();
                shape.remove(1);
                let correction = self.rng.random_range(0..=1);
                self.bind(
                    format!("{}.{op}(1, correction = {correction})", x.name),
                    DType::F32,
                    shape,
                );
            } else {
                self.bind(
                    format!("{}.{op}(dim = [0, 1], keepdim = {keep})", x.name),
                    DType::F32,
                    reduced,
                );
            }
            return true;
        }
        let op = ["sum", "amax", "amin", "max"]
            .choose(&mut self.rng)
            .copied()
            .unwrap_or("sum");
        self.bind(
            format!("{}.{op}(dim = [1, 0], keepdim = {keep})", x.name),
            x.dtype,
            reduced,
        );
        true
    }
}
