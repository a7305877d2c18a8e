//! Whether a call passes arguments its callee's parameters accept: user functions by their
//! definitions, builtins by the signatures in the builtin table. The messages, codes and
//! locations are the ones the call reports when it runs.

use super::names::Signature;
use crate::diag::{Code, Diagnostic};
use crate::eval::BuiltinDef;
use crate::source::Span;
use crate::syntax::ast::Arg;

/// Problems with a call of a user function (at most one, reported at the call).
pub fn user(signature: &Signature, args: &[Arg], span: Span) -> Vec<Diagnostic> {
    let positional = args.iter().filter(|arg| arg.name.is_none()).count();
    let params = &signature.params;
    let mut given: Vec<bool> = (0..params.len()).map(|index| index < positional).collect();
    let mut problem = None;
    if positional > params.len() {
        problem = Some(format!(
            "{}() takes {} argument{} but {positional} were given",
            signature.name,
            params.len(),
            if params.len() == 1 { "" } else { "s" }
        ));
    }
    for arg in args.iter().filter_map(|arg| arg.name.as_ref()) {
        match params.iter().position(|(name, _)| **name == *arg.name) {
            Some(index) if given[index] => {
                problem.get_or_insert(format!(
                    "{}() got two values for `{}`",
                    signature.name, arg.name
                ));
            }
            Some(index) => given[index] = true,
            None => {
                problem.get_or_insert(format!(
                    "{}() has no parameter `{}`",
                    signature.name, arg.name
                ));
            }
        }
    }
    if let Some(((missing, _), _)) = params
        .iter()
        .zip(&given)
        .find(|((_, has_default), given)| !**given && !*has_default)
    {
        problem.get_or_insert(format!(
            "{}() is missing the argument `{missing}`",
            signature.name
        ));
    }
    let Some(message) = problem else {
        return Vec::new();
    };
    let code = if message.contains("has no parameter") {
        Code::NameError
    } else {
        Code::TypeError
    };
    vec![
        Diagnostic::error(code, span, message)
            .with_label("in this call")
            .with_secondary(signature.span, "defined here"),
    ]
}

/// The first problem with a call of a builtin, where running it reports it: an extra
/// positional argument at that argument, an unknown or repeated keyword at the keyword, a
/// missing argument at the call. `receiver` is the tensor of a method call, its first
/// argument.
pub fn builtin(
    def: &BuiltinDef,
    args: &[Arg],
    receiver: Option<Span>,
    span: Span,
) -> Vec<Diagnostic> {
    let params: Vec<_> = def.params().collect();
    let name = def.name();
    let variadic = params.iter().position(|param| param.variadic);
    let positional_params = variadic.unwrap_or(params.len());
    let mut given = vec![false; params.len()];
    let positional_spans = receiver.into_iter().chain(
        args.iter()
            .filter(|arg| arg.name.is_none())
            .map(|arg| arg.value.span),
    );
    for (position, at) in positional_spans.enumerate() {
        if position < positional_params {
            given[position] = true;
        } else if variadic.is_none() {
            let message = format!(
                "{name}() takes at most {positional_params} argument{}",
                if positional_params == 1 { "" } else { "s" }
            );
            return vec![
                Diagnostic::error(Code::TypeError, at, message).with_label("unexpected argument"),
            ];
        }
    }
    for (keyword, value) in args
        .iter()
        .filter_map(|arg| arg.name.as_ref().map(|name| (name, &arg.value)))
    {
        let at = keyword.span.to(value.span);
        let position = params
            .iter()
            .position(|param| !param.variadic && param.name == &*keyword.name);
        let Some(position) = position else {
            let names: Vec<String> = params
                .iter()
                .filter(|param| !param.variadic)
                .map(|param| format!("`{}`", param.name))
                .collect();
            let help = if names.is_empty() {
                format!("{name}() takes no keyword arguments")
            } else {
                format!("its parameters are {}", names.join(", "))
            };
            let message = format!("{name}() has no parameter `{}`", keyword.name);
            return vec![Diagnostic::error(Code::NameError, at, message).with_help(help)];
        };
        if given[position] {
            let message = format!("{name}() got two values for `{}`", keyword.name);
            return vec![Diagnostic::error(Code::TypeError, at, message)];
        }
        given[position] = true;
    }
    let missing = params
        .iter()
        .zip(&given)
        .find(|(param, given)| !**given && !param.variadic && param.default.is_none());
    match missing {
        Some((param, _)) => vec![Diagnostic::error(
            Code::TypeError,
            span,
            format!("{name}() is missing the argument `{}`", param.name),
        )],
        None => Vec::new(),
    }
}
