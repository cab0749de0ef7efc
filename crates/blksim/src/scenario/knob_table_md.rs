//! md RAID5's read-path knob (its entry in `KNOBS` is in `knob_table.rs`): whether a read that
//! lies in one chunk bypasses the stripe cache (`chunk_aligned_read`, with
//! `raid5_mergeable_bvec` keeping read bios inside a chunk), which raid5 has from 2.6.20.

use super::*;

pub const MD_ALIGNED_READS: KnobSpec = KnobSpec {
    key: "md.aligned_reads",
    kind: KnobKind::Bool,
    help: "raid5's chunk_aligned_read and raid5_mergeable_bvec (2.6.20+): read bios end at chunk boundaries and one inside a chunk goes straight to its member; false (2.6.19 and before): read bios may cross chunks (up to md's 124 KiB) and every read goes through the stripe cache, a stripe head per 4 KiB of each member",
    live: Live::Restart,
    access: flag!(md.aligned_reads),
    applies: validate::md_array,
    values: &[],
};
