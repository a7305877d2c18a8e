//! Tests of the symbolic engine: rules as rows, §6 scenarios as scripts, soundness by proptest.

mod guards;
mod robustness;
mod rules;
mod scenarios;
mod soundness;
mod support;
