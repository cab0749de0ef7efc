//! The page cache's readahead knobs (their entries in `KNOBS` are in `knob_table.rs`;
//! `mm::readahead` reads them): `vm.readahead`, how windows grow and when the next starts
//! (mm/readahead.c), and `vm.blkdev_readahead`, how a window of a device node read without a
//! file system (`dd if=/dev/sda`) becomes bios (fs/block_dev.c).

use super::*;

/// The readahead of the era (`mm/readahead.c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Readahead {
    /// 2.6.23+ on-demand readahead, simplified: `read_ahead_kb` windows, the next one started
    /// when the reader reaches the newest (`PG_readahead`); a window reclaimed before use is
    /// read again whole; the reader copies once the whole window is read.
    #[default]
    #[serde(rename = "ondemand")]
    Ondemand,
    /// 2.6.20's current and ahead windows (`page_cache_readahead`): the first window 2 or 4
    /// times the read, each next one 2 or 4 times the last up to `read_ahead_kb`, a miss
    /// shrinks it by 2 pages; the ahead window is started when the reader enters the current
    /// one, without blocking: a read-congested device drops it (`reset_ahead_window`), and it
    /// is started blocking once the reader reaches it. A page missing from the cache is read
    /// alone (`readpage`); a page is read as soon as its bio ends.
    #[serde(rename = "2.6.20")]
    V2_6_20,
}

pub const VM_READAHEAD: KnobSpec = KnobSpec {
        key: "vm.readahead",
        kind: KnobKind::Enum(&["ondemand", "2.6.20"]),
        help: "ondemand: read_ahead_kb windows, the next started at the newest (2.6.23+); 2.6.20: current and ahead windows growing to read_ahead_kb, the ahead one dropped while the device is read-congested",
        live: Live::Restart,
    access: named!(vm.readahead),
    applies: validate::anywhere,
    values: &[],
};

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
