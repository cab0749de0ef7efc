//! The block device node's page cache reads (fs/block_dev.c): how a readahead window of a
//! device read without a file system (`dd if=/dev/sda`) becomes bios. Its entry in `KNOBS` is
//! in `knob_table.rs`; `mm::readahead` builds the bios.

use super::*;

/// `vm.blkdev_readahead`: the address space operations of a block device's page cache.
/// `readpage` (2.6.x-3.17: `def_blk_aops` has only `.readpage = blkdev_readpage`, so
/// `read_pages` reads each page of a window alone through `block_read_full_page`: a bio per
/// page, which only the elevator can merge) or `mpage` (3.18+, 447f05bb488b "block_dev:
/// implement readpages() to optimize sequential read": `blkdev_readpages` calls
/// `mpage_readpages`, which adds a window's contiguous pages to one bio up to the queue's
/// limits). A read with readahead off still reads a page at a time (`readpage`) in both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlkdevReadahead {
    #[default]
    Readpage,
    Mpage,
}

pub const VM_BLKDEV_READAHEAD: KnobSpec = KnobSpec {
    key: "vm.blkdev_readahead",
    kind: KnobKind::Enum(&["readpage", "mpage"]),
    help: "how a device node's readahead window becomes bios (fs/block_dev.c): readpage (2.6.x-3.17, block_read_full_page: a bio per 4 KiB page, merged only by the elevator) or mpage (3.18+, blkdev_readpages: mpage_readpages puts contiguous pages in one bio up to max_sectors_kb). Files on a file system (workload.filesystem=xfs) always read as mpage",
    live: Live::Restart,
    access: named!(vm.blkdev_readahead),
    applies: validate::anywhere,
    values: &[],
};
