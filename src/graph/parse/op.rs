//! Op nodes: the op's name picks a prototype, and one arm per op reads its operands and
//! attributes from the argument items, in the order `graph::print` writes them. There is no
//! catch-all arm: a new op must say how it is read.

use super::value::Item;
use crate::dtype::DType;
use crate::graph::ir::{Arg, Node};
use crate::graph::op::{BinaryOp, IndexSpec, Number, Op, ReduceOp, UnaryOp};
use crate::graph::shape::{Dim, Meta};

/// An op of that name with empty attributes, to be completed by [`complete`].
pub fn prototype(name: &str) -> Option<Op> {
    if let Some(op) = BinaryOp::ALL.into_iter().find(|op| op.name() == name) {
        return Some(Op::Binary(op));
    }
    if let Some(op) = UnaryOp::ALL.into_iter().find(|op| op.name() == name) {
        return Some(Op::Unary(op));
    }
    if let Some(op) = ReduceOp::ALL.into_iter().find(|op| op.name() == name) {
        return Some(Op::Reduce {
            op,
            dims: None,
            keepdim: false,
        });
    }
    let zero = Number::Int(Dim::ZERO);
    let op = match name {
        "full" => Op::Full {
            shape: Vec::new(),
            dtype: DType::F32,
        },
        "arange" => Op::Arange {
            start: zero,
            end: zero,
            step: zero,
        },
        "randn" => Op::Randn { shape: Vec::new() },
        "cast" => Op::Cast(DType::F32),
        "where" => Op::Where,
        "clamp" => Op::Clamp {
            min: false,
            max: false,
        },
        "cumsum" => Op::Cumsum { dim: 0 },
        "diff" => Op::Diff { dim: 0 },
        "sort" => Op::Sort {
            dim: 0,
            descending: false,
        },
        "topk" => Op::TopK {
            k: Dim::ZERO,
            dim: 0,
            largest: true,
        },
        "reshape" => Op::Reshape { shape: Vec::new() },
        "permute" => Op::Permute { dims: Vec::new() },
        "squeeze" => Op::Squeeze { dims: Vec::new() },
        "unsqueeze" => Op::Unsqueeze { dim: 0 },
        "expand" => Op::Expand { shape: Vec::new() },
        "cat" => Op::Cat { dim: 0 },
        "stack" => Op::Stack { dim: 0 },
        "split" => Op::Split {
            sizes: Vec::new(),
            dim: 0,
        },
        "narrow" => Op::Narrow {
            dim: 0,
            start: Dim::ZERO,
            length: Dim::ZERO,
        },
        "index_select" => Op::IndexSelect { dim: 0 },
        "gather" => Op::Gather { dim: 0 },
        "index" => Op::Index { items: Vec::new() },
        "nonzero" => Op::Nonzero,
        "masked_select" => Op::MaskedSelect,
        "repeat_interleave" => Op::RepeatInterleave { dim: None },
        "unique" => Op::Unique,
        "matmul" => Op::MatMul,
        _ => return None,
    };
    Some(op)
}

/// The op and its operands from the argument items. `outputs` are the node's types (a
/// `full` takes its dtype from them); `nodes` are the nodes before it (an index tensor is a
/// mask when it is `bool`).
pub fn complete(
    prototype: Op,
    items: Vec<Item>,
    outputs: &[Meta],
    nodes: &[Node],
) -> Result<(Op, Vec<Arg>), String> {
    let mut items = Items(items.into_iter().collect());
    match prototype {
        Op::Full { .. } => {
            let shape = items.dims()?;
            let dtype = outputs.first().ok_or("full() has one output")?.dtype;
            items.operands_only(Op::Full { shape, dtype }, 1)
        }
        Op::Arange { .. } => {
            let [start, end, step] = [items.number()?, items.number()?, items.number()?];
            items.operands_only(Op::Arange { start, end, step }, 0)
        }
        Op::Randn { .. } => {
            let shape = items.dims()?;
            items.operands_only(Op::Randn { shape }, 0)
        }
        Op::Binary(_) | Op::MaskedSelect | Op::MatMul => items.operands_only(prototype, 2),
        Op::Unary(_) | Op::Nonzero | Op::Unique => items.operands_only(prototype, 1),
        Op::Where => items.operands_only(prototype, 3),
        Op::Cast(_) => {
            let operand = items.operand()?;
            let dtype = items.dtype()?;
            items.done(Op::Cast(dtype), vec![operand])
        }
        Op::Clamp { .. } => clamp(items),
        Op::Reduce { op, .. } => reduce(op, items),
        Op::Cumsum { .. } => items.operand_and_dim(|dim| Op::Cumsum { dim }),
        Op::Diff { .. } => items.operand_and_dim(|dim| Op::Diff { dim }),
        Op::Sort { .. } => {
            let descending = items.flag("descending", false)?;
            items.operand_and_dim(|dim| Op::Sort { dim, descending })
        }
        Op::TopK { .. } => {
            let largest = items.flag("largest", true)?;
            let operand = items.operand()?;
            let k = items.dim()?;
            let dim = items.index()?;
            items.done(Op::TopK { k, dim, largest }, vec![operand])
        }
        Op::Unsqueeze { .. } => items.operand_and_dim(|dim| Op::Unsqueeze { dim }),
        Op::Cat { .. } => items.operands_and_dim(|dim| Op::Cat { dim }),
        Op::Stack { .. } => items.operands_and_dim(|dim| Op::Stack { dim }),
        Op::Reshape { .. } => items.operand_and_shape(|shape| Op::Reshape { shape }),
        Op::Expand { .. } => items.operand_and_shape(|shape| Op::Expand { shape }),
        Op::Permute { .. } => items.operand_and_dims(|dims| Op::Permute { dims }),
        Op::Squeeze { .. } => items.operand_and_dims(|dims| Op::Squeeze { dims }),
        Op::Split { .. } => {
            let operand = items.operand()?;
            let sizes = items.dims()?;
            let dim = items.index()?;
            items.done(Op::Split { sizes, dim }, vec![operand])
        }
        Op::Narrow { .. } => {
            let operand = items.operand()?;
            let dim = items.index()?;
            let [start, length] = [items.dim()?, items.dim()?];
            items.done(Op::Narrow { dim, start, length }, vec![operand])
        }
        Op::IndexSelect { .. } => items.operand_dim_operand(|dim| Op::IndexSelect { dim }),
        Op::Gather { .. } => items.operand_dim_operand(|dim| Op::Gather { dim }),
        Op::Fused(_) => Err(
            "a fused node cannot be read back: write its operations unfused and run the `fuse` pass"
                .to_string(),
        ),
        Op::Index { .. } => index(items, nodes),
        Op::RepeatInterleave { .. } | Op::RepeatIndices => repeat(items),
    }
}

fn clamp(mut items: Items) -> Result<(Op, Vec<Arg>), String> {
    let mut operands = vec![items.operand()?];
    let mut bound = |name: &str| -> Result<bool, String> {
        match items.keyword(name) {
            Some(item) => {
                operands.push(arg(item)?);
                Ok(true)
            }
            None => Ok(false),
        }
    };
    let (min, max) = (bound("min")?, bound("max")?);
    items.done(Op::Clamp { min, max }, operands)
}

fn reduce(op: ReduceOp, mut items: Items) -> Result<(Op, Vec<Arg>), String> {
    let operand = items.operand()?;
    let dims = items.keyword("dims").map(indices).transpose()?;
    let keepdim = items.flag("keepdim", false)?;
    items.done(Op::Reduce { op, dims, keepdim }, vec![operand])
}

fn repeat(mut items: Items) -> Result<(Op, Vec<Arg>), String> {
    let dim = items
        .keyword("dim")
        .map(|item| index_of(&item))
        .transpose()?;
    let operands = items.rest()?;
    match (operands.len(), dim) {
        (1, None) => Ok((Op::RepeatIndices, operands)),
        (2, dim) => Ok((Op::RepeatInterleave { dim }, operands)),
        _ => Err("repeat_interleave takes the counts, or a tensor and the counts".to_string()),
    }
}

/// `index(%0, [...])`: a `bool` tensor item is a mask over its dims, an `i64` one indices.
fn index(mut items: Items, nodes: &[Node]) -> Result<(Op, Vec<Arg>), String> {
    let mut operands = vec![items.operand()?];
    let Some(Item::List(list)) = items.next() else {
        return Err("index() takes a tensor and a list of indices".to_string());
    };
    let mut specs = Vec::new();
    for item in list {
        specs.push(match item {
            Item::Arg(Arg::Int(position)) => IndexSpec::Int(position),
            Item::Slice { start, stop, step } => IndexSpec::Slice { start, stop, step },
            Item::NewAxis => IndexSpec::NewAxis,
            Item::Arg(Arg::Tensor(value)) => {
                operands.push(Arg::Tensor(value));
                let meta = &nodes[value.node.index()].outputs[value.output as usize];
                match meta.dtype {
                    DType::Bool => IndexSpec::Mask { dims: meta.ndim() },
                    DType::I64 | DType::F32 => IndexSpec::Indices { ndim: meta.ndim() },
                }
            }
            _ => return Err("an index is an int, a slice, `none` or a tensor".to_string()),
        });
    }
    items.done(Op::Index { items: specs }, operands)
}

fn arg(item: Item) -> Result<Arg, String> {
    match item {
        Item::Arg(arg) => Ok(arg),
        _ => Err("expected an operand".to_string()),
    }
}

fn index_of(item: &Item) -> Result<usize, String> {
    match item {
        Item::Arg(Arg::Int(Dim::Known(value))) => usize::try_from(*value)
            .ok()
            .filter(|value| u32::try_from(*value).is_ok())
            .ok_or_else(|| format!("{value} is not a dimension")),
        _ => Err("expected a dimension".to_string()),
    }
}

fn indices(item: Item) -> Result<Vec<usize>, String> {
    match item {
        Item::List(list) => list.iter().map(index_of).collect(),
        _ => Err("expected a list of dimensions".to_string()),
    }
}

/// The argument items, consumed in order.
struct Items(std::collections::VecDeque<Item>);

impl Items {
    fn next(&mut self) -> Option<Item> {
        self.0.pop_front()
    }

    fn take(&mut self, what: &str) -> Result<Item, String> {
        self.next().ok_or_else(|| format!("missing {what}"))
    }

    fn operand(&mut self) -> Result<Arg, String> {
        arg(self.take("an operand")?)
    }

    fn index(&mut self) -> Result<usize, String> {
        index_of(&self.take("a dimension")?)
    }

    fn indices(&mut self) -> Result<Vec<usize>, String> {
        indices(self.take("a list of dimensions")?)
    }

    fn dim(&mut self) -> Result<Dim, String> {
        match self.take("a size")? {
            Item::Arg(Arg::Int(dim)) => Ok(dim),
            _ => Err("expected a size".to_string()),
        }
    }

    fn dims(&mut self) -> Result<Vec<Dim>, String> {
        match self.take("a list of sizes")? {
            Item::List(list) => list
                .into_iter()
                .map(|item| match item {
                    Item::Arg(Arg::Int(dim)) => Ok(dim),
                    _ => Err("expected a size".to_string()),
                })
                .collect(),
            _ => Err("expected a list of sizes".to_string()),
        }
    }

    fn number(&mut self) -> Result<Number, String> {
        match self.take("a number")? {
            Item::Arg(Arg::Int(dim)) => Ok(Number::Int(dim)),
            Item::Arg(Arg::Float(x)) => Ok(Number::Float(x)),
            _ => Err("expected a number".to_string()),
        }
    }

    fn dtype(&mut self) -> Result<DType, String> {
        match self.take("a dtype")? {
            Item::Word(word) => super::value::dtype_named(&word).ok_or("expected a dtype".into()),
            _ => Err("expected a dtype".to_string()),
        }
    }

    /// `[%0, %1]`: the operands of `cat` and `stack`.
    fn operands(&mut self) -> Result<Vec<Arg>, String> {
        match self.take("a list of tensors")? {
            Item::List(list) if !list.is_empty() => list
                .into_iter()
                .map(|item| match item {
                    Item::Arg(Arg::Tensor(value)) => Ok(Arg::Tensor(value)),
                    _ => Err("expected a tensor".to_string()),
                })
                .collect(),
            _ => Err("expected a list of tensors".to_string()),
        }
    }

    /// Removes `name=true` or `name=false`, wherever it is; `default` when absent.
    fn flag(&mut self, name: &str, default: bool) -> Result<bool, String> {
        match self.keyword(name) {
            Some(Item::Arg(Arg::Bool(value))) => Ok(value),
            Some(_) => Err(format!("{name} is true or false")),
            None => Ok(default),
        }
    }

    /// Removes `name=value`, wherever it is.
    fn keyword(&mut self, name: &str) -> Option<Item> {
        let position = self
            .0
            .iter()
            .position(|item| matches!(item, Item::Keyword(key, _) if key == name))?;
        match self.0.remove(position) {
            Some(Item::Keyword(_, value)) => Some(*value),
            _ => None,
        }
    }

    /// The remaining items, all operands.
    fn rest(&mut self) -> Result<Vec<Arg>, String> {
        self.0.drain(..).map(arg).collect()
    }

    /// An op that takes `count` operands and nothing else.
    fn operands_only(mut self, op: Op, count: usize) -> Result<(Op, Vec<Arg>), String> {
        let operands = self.rest()?;
        if operands.len() == count {
            Ok((op, operands))
        } else {
            let found = operands.len();
            Err(format!("{} takes {count} operands, not {found}", op.name()))
        }
    }

    /// `cumsum(%0, 1)`.
    fn operand_and_dim(mut self, op: impl Fn(usize) -> Op) -> Result<(Op, Vec<Arg>), String> {
        let operand = self.operand()?;
        let dim = self.index()?;
        self.done(op(dim), vec![operand])
    }

    /// `cat([%0, %1], 0)`.
    fn operands_and_dim(mut self, op: impl Fn(usize) -> Op) -> Result<(Op, Vec<Arg>), String> {
        let operands = self.operands()?;
        let dim = self.index()?;
        self.done(op(dim), operands)
    }

    /// `reshape(%0, [s0, 2])`.
    fn operand_and_shape(mut self, op: impl Fn(Vec<Dim>) -> Op) -> Result<(Op, Vec<Arg>), String> {
        let operand = self.operand()?;
        let shape = self.dims()?;
        self.done(op(shape), vec![operand])
    }

    /// `permute(%0, [1, 0])`.
    fn operand_and_dims(mut self, op: impl Fn(Vec<usize>) -> Op) -> Result<(Op, Vec<Arg>), String> {
        let operand = self.operand()?;
        let dims = self.indices()?;
        self.done(op(dims), vec![operand])
    }

    /// `gather(%0, 1, %1)`.
    fn operand_dim_operand(mut self, op: impl Fn(usize) -> Op) -> Result<(Op, Vec<Arg>), String> {
        let operand = self.operand()?;
        let dim = self.index()?;
        let index = self.operand()?;
        self.done(op(dim), vec![operand, index])
    }

    /// The op, if nothing is left over.
    fn done(self, op: Op, operands: Vec<Arg>) -> Result<(Op, Vec<Arg>), String> {
        match self.0.front() {
            None => Ok((op, operands)),
            Some(_) => Err(format!("too many arguments for {}", op.name())),
        }
    }
}
