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
