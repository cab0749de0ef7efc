//! `mm/`: the page cache's buffered reads and writes (`filemap`), readahead, dirty throttling
//! (`page_writeback`), write congestion (`backing_dev`) and the page cache's room (`page_alloc`).

pub mod backing_dev;
pub mod filemap;
pub mod page_alloc;
pub mod page_writeback;
pub mod readahead;
