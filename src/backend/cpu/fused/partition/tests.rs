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
        stretches: None,
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

/// A plan over `rows` rows of `length` elements, as many to a segment as fit in a chunk.
fn short_rows_plan(rows: usize, length: usize) -> Partition {
    Partition {
        rows_per_segment: (CHUNK / length).max(1),
        ..rows_plan(rows, length)
    }
}

#[test]
fn segments_in_order_give_their_values_where_the_output_places_them() {
    let grid = || Partition {
        numel: 3 * CHUNK + 10,
        rows: None,
        rows_per_task: 1,
        rows_per_segment: 1,
        stretches: None,
        count: 0,
    };
    let plans = [
        (grid(), Domain::Element),
        (short_rows_plan(1001, 3), Domain::Element),
        (short_rows_plan(1001, 3), Domain::Row),
        (rows_plan(5, 2000), Domain::Element),
        (rows_plan(5, 2000), Domain::Row),
    ];
    for (plan, domain) in plans {
        let per_segment = plan.values_per_segment(domain);
        let (mut values, mut elements, mut index) = (0, 0, 0);
        while values < plan.values_of(domain) {
            let (segment, count) = plan.segment_in_order(index, domain);
            assert_eq!(
                values,
                index * per_segment,
                "segment {index} over {domain:?}"
            );
            assert_eq!(segment.start, elements, "segment {index} over {domain:?}");
            assert!(0 < count && count <= per_segment);
            values += count;
            elements += segment.len;
            index += 1;
        }
        assert_eq!(values, plan.values_of(domain));
        assert_eq!(elements, plan.numel);
    }
}
