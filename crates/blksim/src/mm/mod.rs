//! `mm/`: the page cache's buffered reads and writes (`filemap`), readahead, dirty throttling
//! (`page_writeback`) and write congestion (`backing_dev`).

pub mod backing_dev;
pub mod filemap;
pub mod page_writeback;
pub mod readahead;
