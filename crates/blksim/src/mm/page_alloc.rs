//! `mm/page_alloc.c`: what of the box's memory the page cache can have. The model does not
//! allocate pages one by one; it sizes the page cache's room once, from `vm.mem_mb` less what
//! the kernel holds that reclaim cannot take back (md's stripe cache), and refuses a stripe
//! cache the box could not hold. The kernel's own text, slab and reserve are not taken out of
//! the page cache (as before this file), and the dirty limits stay on all of `vm.mem_mb`, as
//! 2.6.20's `get_dirty_limits` takes them from `vm_total_pages`.

use crate::scenario::{Scenario, StackKind};

use super::PAGE_SIZE;

/// `init_per_zone_pages_min` (2.6.20, mm/page_alloc.c):
/// `min_free_kbytes = int_sqrt(lowmem_kbytes * 16)`, clamped to 128..65536 KiB: the reserve an
/// allocation that may sleep (GFP_KERNEL) leaves free. Taken over the whole box (a 64-bit
/// kernel's lowmem).
pub fn min_free_bytes(mem_mb: u32) -> u64 {
    let lowmem_kb = mem_mb as u64 * 1024;
    (lowmem_kb * 16).isqrt().clamp(128, 65536) * 1024
}

/// The stripe cache's pages: `grow_one_stripe` (2.6.20 raid5.c) gives each stripe head a page
/// per member disk (`grow_buffers(sh, conf->raid_disks)`), kernel memory reclaim does not take.
pub fn stripe_cache_bytes(s: &Scenario) -> u64 {
    if s.stack == StackKind::Md {
        s.md.stripe_cache_size as u64 * s.disks as u64 * PAGE_SIZE
    } else {
        0
    }
}

/// An upper bound on the stripe heads `s`'s box holds: all of it but the reserve.
/// `raid5_store_stripe_cache_size` grows the cache one `grow_one_stripe` at a time and stops,
/// returning success, at the first that fails; before that `alloc_page(GFP_KERNEL)` reclaims
/// and may call the OOM killer, and the kernel's own memory comes first. The model refuses a
/// stripe cache over this bound instead of running a box out of memory.
pub fn stripe_heads_max(s: &Scenario) -> u64 {
    let room = (s.vm.mem_mb as u64 * (1 << 20)).saturating_sub(min_free_bytes(s.vm.mem_mb));
    room / (s.disks.max(1) as u64 * PAGE_SIZE)
}

/// What the page cache can hold: the box's memory less the stripe cache's pages.
pub fn page_cache_bytes(s: &Scenario) -> u64 {
    (s.vm.mem_mb as u64 * (1 << 20)).saturating_sub(stripe_cache_bytes(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_free_kbytes_is_the_square_root_rule_within_its_clamp() {
        // 1 GiB: int_sqrt(1048576 * 16) = 4096 KiB.
        assert_eq!(min_free_bytes(1024), 4096 * 1024);
        assert_eq!(min_free_bytes(1), 128 * 1024);
        assert_eq!(min_free_bytes(1 << 20), 65536 * 1024);
    }

    #[test]
    fn the_stripe_cache_s_pages_come_out_of_the_page_cache() {
        let mut s = Scenario { stack: StackKind::Md, disks: 8, ..Scenario::default() };
        s.vm.mem_mb = 1024;
        s.md.stripe_cache_size = 256;
        // 256 heads × 8 members × 4 KiB = 8 MiB.
        assert_eq!(stripe_cache_bytes(&s), 8 << 20);
        assert_eq!(page_cache_bytes(&s), 1016 << 20);
        // 1 GiB less the 4 MiB reserve, in heads of 32 KiB.
        assert_eq!(stripe_heads_max(&s), (1020 << 20) / (8 * 4096));
        s.stack = StackKind::Direct;
        assert_eq!(page_cache_bytes(&s), 1024 << 20);
    }
}
