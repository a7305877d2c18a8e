//! Tests of taking rows.
