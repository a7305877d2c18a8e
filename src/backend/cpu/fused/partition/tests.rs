use super::*;

#[test]
fn the_nth_set_flag_counts_only_set_flags() {
    let flags = [false, true, false, true, true];
    assert_eq!(nth_set(&flags, 0), 1);
    assert_eq!(nth_set(&flags, 2), 4);
    assert_eq!(nth_set(&flags, 3), flags.len());
}

#[test]
fn element_blocks_cover_everything_with_their_kept_counts() {
    let numel = 2 * BLOCK + 5;
    let mut counts = vec![1; numel.div_ceil(CHUNK)];
    counts[0] = 7;
    let stretches = element_blocks(&counts, numel);
    let per_block = BLOCK / CHUNK;
    assert_eq!(
        stretches,
        vec![
            Stretch {
                start: 0,
                end: BLOCK,
                kept_len: per_block + 6
            },
            Stretch {
                start: BLOCK,
                end: 2 * BLOCK,
                kept_len: per_block
            },
            Stretch {
                start: 2 * BLOCK,
                end: numel,
                kept_len: 1
            },
        ]
    );
}

#[test]
fn the_last_grid_segment_ends_at_the_end() {
    let numel = CHUNK + 10;
    assert_eq!(grid_segment(1, numel).start, CHUNK);
    assert_eq!(grid_segment(1, numel).len, 10);
}

/// A plan over rows: `rows` rows of `length` elements, as [`Partition::new`] makes it.
fn rows_plan(rows: usize, length: usize) -> Partition {
    Partition {
        numel: rows * length,
        rows: Some((rows, length)),
        rows_per_task: (BLOCK / length.max(1)).max(1),
        rows_per_segment: 1,
        stretches: Vec::new(),
        counts: Vec::new(),
        count: 0,
    }
}

#[test]
fn many_empty_rows_are_planned_as_one() {
    let (one, rows) = rows_plan(3 * BLOCK, 0)
        .one_empty_row()
        .expect("empty rows are all alike");
    assert_eq!(rows, 3 * BLOCK);
    assert_eq!(one.tasks(), 1);
    assert_eq!(one.output_lens(Domain::Row), vec![1]);
    assert_eq!(one.output_lens(Domain::Element), vec![0]);
    let segments = one.segments(0);
    assert_eq!(segments.len(), 1);
    assert_eq!((segments[0].start, segments[0].len), (0, 0));
    // One empty row, or rows with elements, run as they are.
    assert!(rows_plan(1, 0).one_empty_row().is_none());
    assert!(rows_plan(5, 3).one_empty_row().is_none());
}
