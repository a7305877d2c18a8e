//! The form an op must have before its shape rule may look at it: how many operands it
//! takes, and dims within its operands' ranks. Traced ops have this form by construction
//! (the interpreter canonicalises them); a parsed graph may not, and the rules index shapes
//! by these dims without checking.

use crate::graph::fused::{FusedKernel, InstrKind, OutputKind};
use crate::graph::op::{IndexSpec, Op};
use crate::graph::shape::Meta;

/// Why `op` cannot apply to operands of these types, if it cannot.
pub fn check_form(op: &Op, inputs: &[Meta]) -> Result<(), String> {
    let rank = inputs.first().map_or(0, Meta::ndim);
    match op {
        Op::Arange { .. } | Op::Randn { .. } => count(inputs, 0),
        Op::Binary(_) | Op::MaskedSelect | Op::MatMul => count(inputs, 2),
        Op::Full { .. }
        | Op::Unary(_)
        | Op::Cast(_)
        | Op::Nonzero
        | Op::Unique
        | Op::RepeatIndices
        | Op::Reshape { .. }
        | Op::Expand { .. } => count(inputs, 1),
        Op::Where => count(inputs, 3),
        Op::Clamp { min, max } => count(inputs, 1 + usize::from(*min) + usize::from(*max)),
        Op::Reduce { dims, .. } => {
            count(inputs, 1)?;
            dims.iter().flatten().try_for_each(|d| within(*d, rank))?;
            distinct(dims.as_deref().unwrap_or_default())
        }
        Op::Cumsum { dim }
        | Op::Diff { dim }
        | Op::Narrow { dim, .. }
        | Op::Split { dim, .. }
        | Op::Sort { dim, .. }
        | Op::TopK { dim, .. } => {
            count(inputs, 1)?;
            within(*dim, rank)
        }
        Op::Unsqueeze { dim } => {
            count(inputs, 1)?;
            within(*dim, rank + 1)
        }
        Op::IndexSelect { dim } | Op::Gather { dim } => {
            count(inputs, 2)?;
            within(*dim, rank)
        }
        Op::RepeatInterleave { dim } => {
            count(inputs, 2)?;
            dim.map_or(Ok(()), |dim| within(dim, rank))
        }
        Op::Permute { dims } => {
            count(inputs, 1)?;
            if dims.len() != rank {
                return Err(format!("permute needs {rank} dims"));
            }
            dims.iter().try_for_each(|d| within(*d, rank))?;
            distinct(dims)
        }
        Op::Squeeze { dims } => {
            count(inputs, 1)?;
            dims.iter().try_for_each(|d| within(*d, rank))?;
            distinct(dims)
        }
        Op::Fused(kernel) => fused(kernel, inputs),
        Op::Cat { dim } => joined(inputs, *dim, rank),
        Op::Stack { dim } => joined(inputs, *dim, rank + 1),
        Op::Index { items } => index(items, inputs),
    }
}

fn count(inputs: &[Meta], wanted: usize) -> Result<(), String> {
    if inputs.len() == wanted {
        Ok(())
    } else {
        Err(format!("takes {wanted} operands, not {}", inputs.len()))
    }
}

fn within(dim: usize, bound: usize) -> Result<(), String> {
    if dim < bound {
        Ok(())
    } else {
        Err(format!("dim {dim} is out of range"))
    }
}

fn distinct(dims: &[usize]) -> Result<(), String> {
    let mut sorted = dims.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() == dims.len() {
        Ok(())
    } else {
        Err("a dim is repeated".to_string())
    }
}

/// `cat` and `stack`: at least one operand, all of one rank, `dim` below `bound`.
fn joined(inputs: &[Meta], dim: usize, bound: usize) -> Result<(), String> {
    let Some(first) = inputs.first() else {
        return Err("takes at least one operand".to_string());
    };
    if inputs.iter().any(|input| input.ndim() != first.ndim()) {
        return Err("joins operands of different ranks".to_string());
    }
    within(dim, bound)
}

/// One operand per mask or index item, of the rank the item says.
fn index(items: &[IndexSpec], inputs: &[Meta]) -> Result<(), String> {
    let mut operands = inputs.iter().skip(1);
    for item in items {
        let wanted = match item {
            IndexSpec::Mask { dims } => *dims,
            IndexSpec::Indices { ndim } => *ndim,
            IndexSpec::Int(_) | IndexSpec::Slice { .. } | IndexSpec::NewAxis => continue,
        };
        match operands.next() {
            Some(operand) if operand.ndim() == wanted => {}
            _ => return Err("an index tensor does not match its item".to_string()),
        }
    }
    match (inputs.is_empty(), operands.next()) {
        (false, None) => Ok(()),
        _ => Err("takes a tensor and one operand per index tensor".to_string()),
    }
}

/// A fused kernel's operands match its inputs, and its instructions and outputs only read
/// earlier instructions.
fn fused(kernel: &FusedKernel, inputs: &[Meta]) -> Result<(), String> {
    count(inputs, kernel.inputs.len())?;
    for (position, (input, expected)) in inputs.iter().zip(&kernel.inputs).enumerate() {
        if input.dtype != expected.dtype || input.ndim() != expected.ndim() {
            return Err(format!(
                "fused operand {position} is not of the kernel's input type"
            ));
        }
    }
    for (index, instr) in kernel.body.iter().enumerate() {
        if instr.operands().any(|operand| operand >= index) {
            return Err(format!(
                "fused instruction i{index} reads a later instruction"
            ));
        }
        if instr.member >= kernel.members.len() {
            return Err(format!("fused instruction i{index} belongs to no member"));
        }
    }
    let mask = kernel.mask();
    let keeps_by_one_mask = kernel.body.iter().all(|instr| match instr.kind {
        InstrKind::Keep(_, by) | InstrKind::Position(by) => Some(by) == mask,
        _ => true,
    });
    if !keeps_by_one_mask {
        return Err("a fused kernel keeps elements by more than one mask".to_string());
    }
    for output in &kernel.outputs {
        let valid = match output.kind {
            OutputKind::Values(value) | OutputKind::Total(_, value) => value < kernel.body.len(),
            OutputKind::Count(by) => by < kernel.body.len(),
        };
        if !valid || output.member >= kernel.members.len() {
            return Err("a fused output is not a value of its kernel".to_string());
        }
    }
    Ok(())
}
