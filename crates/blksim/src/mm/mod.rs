//! `mm/`: the page cache's buffered reads and writes (`filemap`), readahead, dirty throttling
//! (`page_writeback`), write congestion (`backing_dev`) and the page cache's room (`page_alloc`).

/// `PAGE_SIZE` (x86's 4 KiB): the page cache's unit, and a bio_vec's.
pub const PAGE_SIZE: u64 = 4096;

pub mod backing_dev;
pub mod filemap;
pub mod page_alloc;
pub mod page_writeback;
pub mod readahead;
