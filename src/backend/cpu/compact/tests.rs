//! Tests of stream compaction.
