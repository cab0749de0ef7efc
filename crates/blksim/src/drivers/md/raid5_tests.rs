//! raid5.rs's unit tests: the stripe mapping, the stripe cache and its hash table, handle_stripe.

use super::*;

#[test]
fn left_symmetric_parity_rotates_and_data_follows_it() {
    // 4 disks, chunk 8 sectors: row 0 parity on disk 3, data on 0,1,2; row 1 parity on 2.
    let m = |l| compute_sector(l, 8, 4);
    assert_eq!(m(0), Mapped { disk: 0, sector: 0, parity: 3 });
    assert_eq!(m(8), Mapped { disk: 1, sector: 0, parity: 3 });
    assert_eq!(m(16), Mapped { disk: 2, sector: 0, parity: 3 });
    assert_eq!(m(24), Mapped { disk: 3, sector: 8, parity: 2 });
    assert_eq!(m(32), Mapped { disk: 0, sector: 8, parity: 2 });
    assert_eq!(m(27).sector, 11);
}

#[test]
fn the_cache_blocks_when_empty_and_reopens_below_three_quarters() {
    let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2)], 64, 4, ThreadId(0));
    for s in 0..4 {
        assert!(r.get_active_stripe(s * 8).is_some());
    }
    assert_eq!(r.get_active_stripe(99), None);
    assert!(r.inactive_blocked);
    // One free head: still 3 active = 3/4 of 4, so sleepers stay asleep.
    assert!(!r.free(0));
    assert!(!r.can_proceed());
    assert!(r.free(1));
    assert!(r.can_proceed());
    r.unblock();
    assert!(r.get_active_stripe(99).is_some());
}

#[test]
fn heads_sharing_a_hash_bucket_are_found_and_unlinked_alone() {
    // Sectors 4096 apart share a stripe_hashtbl bucket (512 buckets of one page each).
    let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2)], 64, 8, ThreadId(0));
    let sectors = [8u64, 8 + 4096, 8 + 2 * 4096, 16];
    let heads: Vec<u32> = sectors.iter().map(|&s| r.get_active_stripe(s).unwrap()).collect();
    assert_eq!(stripe_hash(sectors[0]), stripe_hash(sectors[2]));
    for (&s, &h) in sectors.iter().zip(&heads) {
        assert_eq!(r.get_active_stripe(s), Some(h), "sector {s} finds its own head");
    }
    // The middle of the chain, then its first: the others stay found, the freed not.
    for gone in [1, 2] {
        r.free(heads[gone]);
        assert_eq!(r.find_stripe(sectors[gone]), None);
    }
    assert_eq!(r.find_stripe(sectors[0]), Some(heads[0]));
    assert_eq!(r.find_stripe(sectors[3]), Some(heads[3]));
    assert_eq!(r.active, 2);
}

#[test]
fn while_the_cache_is_blocked_no_free_stripe_is_handed_out() {
    // 2.6.20 get_active_stripe: once a request found the cache empty (inactive_blocked),
    // free heads are not even tried until active stripes fall below 3/4 of the cache; a
    // head already active for the sector is still found.
    let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2)], 64, 8, ThreadId(0));
    for s in 0..8 {
        assert!(r.get_active_stripe(s * 8).is_some());
    }
    assert_eq!(r.get_active_stripe(100), None);
    assert!(r.inactive_blocked);
    r.free(0);
    assert_eq!(r.free_heads(), 1);
    assert_eq!(r.get_active_stripe(100), None, "a free head, but the cache is blocked");
    assert!(!r.can_proceed(), "7 active of 8: not below 3/4");
    assert_eq!(r.get_active_stripe(8), Some(1), "the active head for sector 8");
    r.free(1);
    r.free(2);
    assert!(r.can_proceed(), "5 active: below 3/4 of 8");
    r.unblock();
    assert!(r.get_active_stripe(100).is_some());
}

fn head_with(r: &mut Raid5, writes: &[u16]) -> u32 {
    let h = r.get_active_stripe(0).unwrap();
    let head = r.head_mut(h);
    head.parity = 3;
    for &d in writes {
        head.pieces.push(Piece { bio: BioId(d as u32), disk: d, write: true, issued: false });
    }
    h
}

#[test]
fn a_full_stripe_write_reads_nothing_and_a_small_one_reads_first() {
    // 4 disks: data 0,1,2, parity 3.
    let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2), DevId(3)], 64, 8, ThreadId(0));
    let h = head_with(&mut r, &[0, 1, 2]);
    let first = r.handle_stripe(h);
    assert_eq!((first.reads.len(), first.writes), (0, vec![0, 1, 2, 3]), "full stripe: write data and parity at once");
    // One page of three: read-modify-write reads the old page and the old parity (2 reads),
    // reconstruct-write the two other pages (2 reads); on a tie the model reconstructs.
    let mut r = Raid5::new(DevId(9), vec![DevId(0), DevId(1), DevId(2), DevId(3)], 64, 8, ThreadId(0));
    let h = head_with(&mut r, &[0]);
    let first = r.handle_stripe(h);
    assert_eq!(first.reads, vec![1, 2]);
    assert!(first.writes.is_empty());
    for d in [1, 2] {
        r.head_mut(h).reading.clear(d);
        r.head_mut(h).uptodate.set(d);
    }
    let second = r.handle_stripe(h);
    assert_eq!(second.writes, vec![0, 3]);
    for d in [0, 3] {
        r.head_mut(h).writing.clear(d);
        r.head_mut(h).uptodate.set(d);
    }
    let third = r.handle_stripe(h);
    assert_eq!(third.done, vec![BioId(0)]);
    assert!(third.idle);
    // With 8 disks, one page written: read-modify-write (2 reads) beats reconstruct (6).
    let disks: Vec<DevId> = (0..8).map(DevId).collect();
    let mut r = Raid5::new(DevId(9), disks, 64, 8, ThreadId(0));
    let h = r.get_active_stripe(0).unwrap();
    r.head_mut(h).parity = 7;
    r.head_mut(h).pieces.push(Piece { bio: BioId(1), disk: 2, write: true, issued: false });
    assert_eq!(r.handle_stripe(h).reads, vec![2, 7]);
}
