//! `block/blk-tag.c`: the device's tag map (TCQ/NCQ `queue_depth`).

/// Device tags (TCQ/NCQ `queue_depth`): a bitmap, lowest free tag first.
#[derive(Clone, Debug)]
pub struct TagMap {
    depth: u32,
    busy: u32,
    bits: Vec<u64>,
}

impl TagMap {
    pub fn new(depth: u32) -> TagMap {
        TagMap { depth, busy: 0, bits: vec![0; (depth as usize).div_ceil(64)] }
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Changes the depth (a write to `queue_depth`). Tags in use above a lowered depth stay
    /// in use until they complete; no new tag is handed out until busy < depth.
    pub fn set_depth(&mut self, depth: u32) {
        let words = (depth as usize).div_ceil(64).max(self.bits.len());
        self.bits.resize(words, 0);
        self.depth = depth;
    }

    pub fn busy(&self) -> u32 {
        self.busy
    }

    pub fn is_full(&self) -> bool {
        self.busy >= self.depth
    }

    pub fn get(&mut self) -> Option<u16> {
        if self.is_full() {
            return None;
        }
        for (w, word) in self.bits.iter_mut().enumerate() {
            if *word != u64::MAX {
                let b = (!*word).trailing_zeros();
                let tag = w as u32 * 64 + b;
                if tag >= self.depth {
                    // Only tags above a lowered depth are free in this word: look no further.
                    break;
                }
                *word |= 1 << b;
                self.busy += 1;
                return Some(tag as u16);
            }
        }
        unreachable!("busy < depth but no free tag")
    }

    pub fn put(&mut self, tag: u16) {
        let (w, b) = (tag as usize / 64, tag % 64);
        assert!(self.bits[w] & (1 << b) != 0, "tag {tag} freed twice");
        self.bits[w] &= !(1 << b);
        self.busy -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_bounded_by_the_depth() {
        let mut t = TagMap::new(3);
        assert_eq!((t.get(), t.get(), t.get(), t.get()), (Some(0), Some(1), Some(2), None));
        t.put(1);
        assert_eq!(t.get(), Some(1));
    }
}
