//! Small integer ids and a bounded slab. Ids index vectors; nothing iterates a hash map.

use serde::{Deserialize, Serialize};

macro_rules! id {
    ($(#[$m:meta])* $name:ident, $t:ty) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub $t);
        impl $name {
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(/// A CPU core.
    CoreId, u16);
id!(/// A thread: a job's process or a kernel thread.
    ThreadId, u32);
id!(/// A block device in iostat's list (sd*, later dm-* and md*).
    DevId, u16);
id!(/// A physical disk (the device model behind a leaf block device).
    DiskId, u16);
id!(/// A SCSI host (HBA).
    HostId, u16);
id!(/// An fio job (one process).
    JobId, u32);
id!(/// A bio in flight.
    BioId, u32);
id!(/// A request allocated from a queue's request pool.
    ReqId, u32);
id!(/// One read() or write() call of a job: the bios it was split into complete it.
    IoId, u32);

/// A slab with a hard capacity: ids are reused lowest-freed-last (a LIFO free list), which is
/// deterministic. Exceeding the capacity is a model bug and panics.
#[derive(Debug)]
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
    capacity: usize,
    name: &'static str,
}

impl<T> Slab<T> {
    pub fn new(name: &'static str, capacity: usize) -> Self {
        Slab { items: Vec::new(), free: Vec::new(), live: 0, capacity, name }
    }

    pub fn insert(&mut self, item: T) -> u32 {
        assert!(self.live < self.capacity, "{} slab over its limit of {}", self.name, self.capacity);
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = Some(item);
            i
        } else {
            self.items.push(Some(item));
            (self.items.len() - 1) as u32
        }
    }

    pub fn remove(&mut self, i: u32) -> T {
        let item = self.items[i as usize].take().unwrap_or_else(|| panic!("{} {i} freed twice", self.name));
        self.free.push(i);
        self.live -= 1;
        item
    }

    pub fn get(&self, i: u32) -> &T {
        self.items[i as usize].as_ref().unwrap_or_else(|| panic!("{} {i} is not live", self.name))
    }

    pub fn get_mut(&mut self, i: u32) -> &mut T {
        let name = self.name;
        self.items[i as usize].as_mut().unwrap_or_else(|| panic!("{name} {i} is not live"))
    }

    pub fn live(&self) -> usize {
        self.live
    }

    /// The live items, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "freed twice")]
    fn double_free_panics() {
        let mut s = Slab::new("bio", 4);
        let a = s.insert(1);
        s.remove(a);
        s.remove(a);
    }

    #[test]
    #[should_panic(expected = "over its limit")]
    fn slab_is_bounded() {
        let mut s = Slab::new("bio", 1);
        s.insert(1);
        s.insert(2);
    }
}
