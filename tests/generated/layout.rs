//! The generator's steps for layouts and the second dim: `permute`, `transpose`, `flatten`,
//! `expand`, `stack`, reductions, scans, slices and takes along dim 1 (`prod`, `argmax`,
//! `argmin`, `gather` with indices from `argsort`), `minimum`/`maximum` of two values that
//! may be NaN, and comparisons between two values.

use rand::RngExt;
use rand::seq::IndexedRandom;

use super::{DType, Generator, Size, Var, fixed};

impl Generator {
    /// One step of layout work; false when the chosen kind had nothing to work on.
    pub(super) fn layout(&mut self) -> bool {
        match self.rng.random_range(0..7) {
            0 => self.reorder(),
            1 => self.widen(),
            2 => self.reduce_rows(),
            3 => self.along_rows(),
            4 => self.take_along_rows(),
            5 => self.pairwise(),
            _ => self.reduce_to_index(),
        }
    }

    /// `permute`, `transpose` and `flatten` of a 2-d value.
    fn reorder(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.shape.len() == 2) else {
            return false;
        };
        let swapped = vec![x.shape[1], x.shape[0]];
        match self.rng.random_range(0..3) {
            0 => self.bind(format!("{}.permute(1, 0)", x.name), x.dtype, swapped),
            1 => self.bind(format!("{}.transpose(0, 1)", x.name), x.dtype, swapped),
            _ => {
                let size = self.own_size();
                let expr = if self.rng.random_bool(0.5) {
                    format!("{}.flatten()", x.name)
                } else {
                    format!("{}.transpose(1, 0).flatten()", x.name)
                };
                self.bind(expr, x.dtype, vec![size]);
            }
        }
        true
    }

    /// A 1-d value made 2-d: `unsqueeze(1).expand(-1, w)` or `stack` of two values.
    fn widen(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.shape.len() == 1) else {
            return false;
        };
        if self.rng.random_bool(0.5) {
            let width = self.rng.random_range(1..=3);
            self.bind(
                format!("{}.unsqueeze(1).expand(-1, {width})", x.name),
                x.dtype,
                vec![x.shape[0], fixed(width)],
            );
        } else {
            let same = |var: &Var| var.dtype == x.dtype && var.shape == x.shape;
            let y = self.pick(same).expect("x itself fits");
            let dim = self.rng.random_range(0..=1);
            let mut shape = x.shape.clone();
            shape.insert(dim, fixed(2));
            self.bind(
                format!("stack([{}, {}], {dim})", x.name, y.name),
                x.dtype,
                shape,
            );
        }
        true
    }

    /// A reduction over dim 1 of a 2-d value, or over dim -1: `sum`, `prod`, `max`, `min`,
    /// `mean`, `any`, `all`, and `argmax`/`argmin`, which name the first NaN.
    fn reduce_rows(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.shape.len() == 2) else {
            return false;
        };
        let ops: &[&str] = match x.dtype {
            DType::F32 => &["sum", "prod", "max", "min", "mean", "argmax", "argmin"],
            DType::I64 => &["sum", "prod", "max", "min", "argmax", "argmin"],
            DType::Bool => &["any", "all"],
        };
        let chosen = ops.choose(&mut self.rng).copied().unwrap_or("sum");
        let (op, dtype) = position_or_value(chosen, &x);
        let keep = self.rng.random_bool(0.3);
        let dim = ["1", "-1"].choose(&mut self.rng).copied().unwrap_or("1");
        let shape = if keep {
            vec![x.shape[0], Size::One]
        } else {
            vec![x.shape[0]]
        };
        self.bind(
            format!("{}.{op}({dim}, keepdim = {keep})", x.name),
            dtype,
            shape,
        );
        true
    }

    /// Scans and slices along dim 1: `cumsum`, `diff`, `x[:, 1:]`, `x[:, :1]`, and
    /// `index_select` of column 0.
    fn along_rows(&mut self) -> bool {
        let forms = [
            "{}.cumsum(1)",
            "{}.diff(1)",
            "{}[:, 1:]",
            "{}[:, :1]",
            "{}.index_select(1, tensor([0, 0]))",
        ];
        let form = forms.choose(&mut self.rng).copied().unwrap_or(forms[0]);
        let differences = form.contains("diff");
        let Some(x) = self.pick(|var| {
            var.shape.len() == 2
                && var.dtype != DType::Bool
                && (!differences || crate::exact_everywhere(var))
        }) else {
            return false;
        };
        let width = match form {
            "{}.cumsum(1)" => x.shape[1],
            "{}[:, :1]" => Size::One,
            _ => self.own_size(),
        };
        self.bind(
            form.replace("{}", &x.name),
            x.dtype,
            vec![x.shape[0], width],
        );
        true
    }

    /// `gather` along dim 1 with indices computed from the same value: the row sorted by
    /// `argsort`, or each row's largest element by `argmax(1, keepdim = true)`.
    fn take_along_rows(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.shape.len() == 2 && var.dtype != DType::Bool) else {
            return false;
        };
        if self.rng.random_bool(0.5) {
            let descending = self.rng.random_bool(0.5);
            self.bind(
                format!(
                    "{x}.gather(1, {x}.argsort(1, descending = {descending}))",
                    x = x.name
                ),
                x.dtype,
                x.shape,
            );
        } else {
            let op = ["argmax", "argmin"]
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("argmax");
            self.bind(
                format!("{x}.gather(1, {x}.{op}(1, keepdim = true))", x = x.name),
                x.dtype,
                vec![x.shape[0], Size::One],
            );
        }
        true
    }

    /// `minimum`/`maximum` of two values of one shape (NaN wins), or a comparison of them.
    fn pairwise(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.dtype != DType::Bool) else {
            return false;
        };
        let same = |var: &Var| var.dtype == x.dtype && var.shape == x.shape;
        let y = self.pick(same).expect("x itself fits");
        if self.rng.random_bool(0.5) {
            let op = ["minimum", "maximum"]
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("minimum");
            self.bind(format!("{op}({}, {})", x.name, y.name), x.dtype, x.shape);
        } else {
            let op = ["==", "<=", "<", "!="]
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("==");
            self.bind(format!("{} {op} {}", x.name, y.name), DType::Bool, x.shape);
        }
        true
    }

    /// `prod`, `argmax` and `argmin` of a whole value (the last two fail when it is empty;
    /// of a computed float, `max` and `min`, which fail alike).
    fn reduce_to_index(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.dtype != DType::Bool && !var.shape.is_empty()) else {
            return false;
        };
        let chosen = ["prod", "argmax", "argmin"]
            .choose(&mut self.rng)
            .copied()
            .unwrap_or("prod");
        let (op, dtype) = position_or_value(chosen, &x);
        self.bind(format!("{}.{op}()", x.name), dtype, Vec::new());
        true
    }
}

/// A reduction `op` of `x` and its result's dtype: `argmax`/`argmin` of a value that is not
/// the same on every device become `max`/`min` (see `exact_everywhere`).
fn position_or_value(op: &'static str, x: &Var) -> (&'static str, DType) {
    let op = if crate::exact_everywhere(x) {
        op
    } else {
        op.trim_start_matches("arg")
    };
    let dtype = if op.starts_with("arg") {
        DType::I64
    } else {
        x.dtype
    };
    (op, dtype)
}
