//! `drivers/nvme/host`: the NVMe driver over PCIe (`pci`): a submission/completion queue pair
//! per CPU, each a blk-mq hardware queue with its own tags and its own interrupt vector.

pub mod pci;
