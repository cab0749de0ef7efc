//! Drivers, as the kernel's `drivers/` holds them: the SCSI midlayer and `sd`, the NVMe PCIe
//! driver, and the stacking drivers of `drivers/md` (device-mapper and md RAID5).

pub mod md;
pub mod nvme;
pub mod scsi;
