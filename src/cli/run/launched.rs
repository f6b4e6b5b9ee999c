//! What `mpirun` (or another PMI launcher) tells a process it starts: its rank among how many,
//! and its place on its host. Read in every build, so that one without the `distributed`
//! feature can refuse to run the whole field on every rank.

/// What the ranks' launcher says of this process: its rank, the ranks and its rank on its host.
#[derive(Debug, Clone, Copy)]
pub struct Launched {
    /// This process's rank.
    pub rank: usize,
    /// How many ranks.
    pub ranks: usize,
    /// Its rank among the ranks of its host (which GPU it takes).
    pub local_rank: usize,
}

impl Launched {
    /// The ranks `mpirun` (Open MPI) or another PMI launcher started, if this process is one.
    pub fn from_env() -> Option<Self> {
        let read = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| std::env::var(name).ok()?.parse::<usize>().ok())
        };
        let ranks = read(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"])?;
        let rank = read(&["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]).unwrap_or(0);
        let local_rank = read(&["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"]).unwrap_or(rank);
        Some(Self {
            rank,
            ranks,
            local_rank,
        })
    }
}

impl Launched {
    /// Refuses to run in a build without the `distributed` feature (each rank would run the
    /// whole field): rank 0 says why, every rank ends with status 1.
    pub fn refuse_undistributed(self) -> anyhow::Result<()> {
        if self.rank != 0 {
            // Rank 0 says why; without MPI there is no barrier to wait at, and a rank
            // ending first could make mpirun end rank 0 before its line is written.
            std::thread::sleep(std::time::Duration::from_secs(2));
            std::process::exit(1);
        }
        anyhow::bail!(
            "started as one of {} ranks, but this heatlab was built without the `distributed` \
             feature: each rank would run the whole field; build it with `cargo build --release \
             --features distributed`",
            self.ranks
        );
    }
}
