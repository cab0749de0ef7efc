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
        impl Idx for $name {
            fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

/// An id that indexes an `IdVec`.
pub trait Idx: Copy {
    fn idx(self) -> usize;
}

/// A vector indexed by its typed id (`sim.devs[dev]`): the devices, jobs, threads, cores,
/// disks and hosts, each in id order. It is a `Vec` otherwise (push, len, iter).
#[derive(Clone, Debug)]
pub struct IdVec<I, T> {
    items: Vec<T>,
    id: std::marker::PhantomData<fn(I)>,
}

impl<I, T> Default for IdVec<I, T> {
    fn default() -> Self {
        IdVec { items: Vec::new(), id: std::marker::PhantomData }
    }
}

impl<I, T> From<Vec<T>> for IdVec<I, T> {
    fn from(items: Vec<T>) -> Self {
        IdVec { items, id: std::marker::PhantomData }
    }
}

impl<I, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(it: It) -> Self {
        Vec::from_iter(it).into()
    }
}

impl<I, T> std::ops::Deref for IdVec<I, T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<I, T> std::ops::DerefMut for IdVec<I, T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.items
    }
}

impl<I: Idx, T> std::ops::Index<I> for IdVec<I, T> {
    type Output = T;
    fn index(&self, i: I) -> &T {
        &self.items[i.idx()]
    }
}

impl<I: Idx, T> std::ops::IndexMut<I> for IdVec<I, T> {
    fn index_mut(&mut self, i: I) -> &mut T {
        &mut self.items[i.idx()]
    }
}

/// By position too, for a walk over `0..len()`.
impl<I, T> std::ops::Index<usize> for IdVec<I, T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.items[i]
    }
}

impl<I, T> std::ops::IndexMut<usize> for IdVec<I, T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[i]
    }
}

impl<'a, I, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, I, T> IntoIterator for &'a mut IdVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

id!(/// A CPU core.
    CoreId, u16);
id!(/// A thread: a job's process or a kernel thread.
    ThreadId, u32);
impl ThreadId {
    /// The idle task (`swapper`, pid 0) in a trace record: an interrupt that found its CPU idle.
    pub const SWAPPER: ThreadId = ThreadId(u32::MAX);
}
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
#[derive(Clone, Debug)]
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

    /// Whether id `i` holds a live item.
    pub fn is_live(&self, i: u32) -> bool {
        self.items.get(i as usize).is_some_and(|x| x.is_some())
    }

    /// The live items, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().flatten()
    }
}

/// A map kept as a vector sorted by key. An elevator holds a handful of requests most of the
/// time, and for that a sorted vector is several times cheaper than a BTreeMap (one
/// contiguous search, no node handles); inserting in the middle shifts the tail, which stays
/// cheap up to the few thousand entries `nr_requests` allows per direction.
#[derive(Clone, Debug)]
pub struct SortedMap<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap { items: Vec::new() }
    }
}

impl<K: Ord + Copy, V> SortedMap<K, V> {
    fn find(&self, key: &K) -> Result<usize, usize> {
        self.items.binary_search_by(|(k, _)| k.cmp(key))
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.find(key).ok().map(|i| &self.items[i].1)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.find(key).ok().map(|i| &mut self.items[i].1)
    }

    /// Inserts or replaces; returns the value replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.items[i].1, value)),
            Err(i) => {
                self.items.insert(i, (key, value));
                None
            }
        }
    }

    /// The value of `key`, inserted as `V::default()` if absent (BTreeMap's
    /// `entry(key).or_default()`).
    pub fn get_or_insert_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.items.insert(i, (key, V::default()));
                i
            }
        };
        &mut self.items[i].1
    }

    /// Inserts unless the key is present (BTreeMap's `entry(key).or_insert(value)`).
    pub fn insert_if_absent(&mut self, key: K, value: V) {
        if let Err(i) = self.find(&key) {
            self.items.insert(i, (key, value));
        }
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.find(key).ok().map(|i| self.items.remove(i).1)
    }

    /// Removes the entry of `key` if its value satisfies `pred`.
    pub fn remove_if(&mut self, key: &K, pred: impl FnOnce(&V) -> bool) {
        if let Ok(i) = self.find(key) {
            if pred(&self.items[i].1) {
                self.items.remove(i);
            }
        }
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.items.iter().map(|(k, v)| (k, v))
    }

    /// The entries with keys in `range`, in key order.
    pub fn range(&self, range: impl std::ops::RangeBounds<K>) -> impl Iterator<Item = (&K, &V)> {
        use std::ops::Bound;
        let lo = match range.start_bound() {
            Bound::Included(k) => self.items.partition_point(|(x, _)| x < k),
            Bound::Excluded(k) => self.items.partition_point(|(x, _)| x <= k),
            Bound::Unbounded => 0,
        };
        let hi = match range.end_bound() {
            Bound::Included(k) => self.items.partition_point(|(x, _)| x <= k),
            Bound::Excluded(k) => self.items.partition_point(|(x, _)| x < k),
            Bound::Unbounded => self.items.len(),
        };
        self.items[lo..hi.max(lo)].iter().map(|(k, v)| (k, v))
    }
}

impl<K: Ord + Copy, V> std::ops::Index<&K> for SortedMap<K, V> {
    type Output = V;
    fn index(&self, key: &K) -> &V {
        self.get(key).expect("no entry for that key")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn sorted_map_agrees_with_btreemap() {
        // A fixed pseudo-random sequence of inserts, removes and range queries.
        let mut ours: SortedMap<(bool, u64), u32> = SortedMap::default();
        let mut std_map: BTreeMap<(bool, u64), u32> = BTreeMap::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = (x & 1 == 1, (x >> 8) % 200);
            match (x >> 40) % 4 {
                0 | 1 => assert_eq!(ours.insert(key, step), std_map.insert(key, step)),
                2 => assert_eq!(ours.remove(&key), std_map.remove(&key)),
                _ => {
                    let hi = (key.0, key.1 + (x >> 50) % 40);
                    let a: Vec<_> = ours.range(key..=hi).map(|(k, v)| (*k, *v)).collect();
                    let b: Vec<_> = std_map.range(key..=hi).map(|(k, v)| (*k, *v)).collect();
                    assert_eq!(a, b);
                    let a: Vec<_> = ours.range(key..).take(3).map(|(k, v)| (*k, *v)).collect();
                    let b: Vec<_> = std_map.range(key..).take(3).map(|(k, v)| (*k, *v)).collect();
                    assert_eq!(a, b);
                }
            }
            if step % 7 == 0 {
                *ours.get_or_insert_default(key) += 1;
                *std_map.entry(key).or_default() += 1;
            }
            assert_eq!(ours.len(), std_map.len());
            assert_eq!(ours.get(&key), std_map.get(&key));
        }
        assert!(ours.iter().map(|(k, v)| (*k, *v)).eq(std_map.iter().map(|(k, v)| (*k, *v))));
    }

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
