//! One stable sort for the page's small lists (a chart's values, iostat's rows, a sweep's
//! seeds, the busiest threads): std compiles a sort for each element type and comparator, 3 to 5
//! KiB of wasm each, so these sort the positions of their elements through one shared copy
//! instead. The order is `sort_by`'s: a stable sort by the same comparison.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`, as `v.sort_by(cmp)` would.
pub fn stable_by<T>(v: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    let order = positions(v.len(), &|a, b| cmp(&v[a], &v[b]));
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(order.into_iter().map(|i| slots[i as usize].take().expect("each position once")));
}

/// `0..n` sorted stably by `cmp` (the one sort every caller shares).
#[inline(never)]
fn positions(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<u32> {
    let n = u32::try_from(n).expect("a list the page sorts fits u32 positions");
    let mut order: Vec<u32> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a as usize, b as usize));
    order
}

#[cfg(test)]
mod tests {
    use super::stable_by;

    /// The same order as `sort_by`, ties kept in their first order, for lists with many ties.
    #[test]
    fn orders_as_sort_by() {
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 5, 20, 33, 200, 1000] {
            let v: Vec<(u8, u32)> = (0..len as u32)
                .map(|i| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((seed >> 60) as u8, i)
                })
                .collect();
            let (mut a, mut b) = (v.clone(), v);
            a.sort_by_key(|x| std::cmp::Reverse(x.0));
            stable_by(&mut b, |x, y| y.0.cmp(&x.0));
            assert_eq!(a, b, "len {len}");
        }
    }
}
