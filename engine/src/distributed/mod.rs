//! One field over many ranks: the field split into bands of rows ([`bands`]), each rank's band
//! stepped by an ordinary backend with halos exchanged every few steps ([`band_field`]), and
//! what the ranks say to each other ([`link`]: MPI with the `distributed` feature, threads of
//! one process without it). A distributed run equals the single-rank run bit for bit.

pub mod band_field;
pub mod bands;
pub mod link;
#[cfg(feature = "distributed")]
pub mod mpi_link;
#[cfg(feature = "distributed")]
pub mod nccl_halos;
#[cfg(unix)]
pub mod npy;
pub mod overlap;
pub mod rank_band;
mod rank_files;
pub mod split;

pub use band_field::{held_rows, BandField, BandTimes, DeviceExchange};
pub use bands::{Band, Bands};
pub use link::{thread_links, RankLink, ThreadLink};
#[cfg(feature = "distributed")]
pub use mpi_link::{MpiLink, MpiSession};
#[cfg(feature = "distributed")]
pub use nccl_halos::NcclHalos;
pub use overlap::OverlapChoice;
pub use rank_band::{serve, BandCommand, OpenRequest};
pub use split::{finish_unopened, ranks_sharing_a_gpu, SplitBackend, SplitOptions};

#[cfg(test)]
mod tests;
