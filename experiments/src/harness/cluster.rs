//! The experiment binaries' side of `--driver cluster`: the process's one control session,
//! opened when the driver list names `cluster`, and which rank writes results (rank 0 only; the
//! others compute the same records and write nothing).

use anyhow::{Context, Result};
use bench_core::driver::cluster::{ClusterTransport, RankFlags, RankSpec, Session};
use clap::{Args, ValueEnum};
use std::sync::{Mutex, OnceLock};

/// Transports `--transport` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// A TCP connection per node pair (loopback or between hosts).
    Tcp,
    /// Shared-memory segments in /dev/shm (every rank on this host).
    Shm,
    /// RDMA verbs (builds with `--features rdma`; device from $SYNCBENCH_RDMA_DEVICE).
    Rdma,
    /// libfabric one-sided writes (builds with `--features ofi`; provider from
    /// $SYNCBENCH_OFI_PROVIDER, e.g. `tcp;ofi_rxm`, `shm`, `verbs;ofi_rxm`).
    Ofi,
}

impl TransportArg {
    fn core(self) -> Result<ClusterTransport> {
        Ok(match self {
            TransportArg::Tcp => ClusterTransport::Tcp,
            TransportArg::Shm => ClusterTransport::Shm,
            #[cfg(feature = "rdma")]
            TransportArg::Rdma => ClusterTransport::Rdma,
            #[cfg(not(feature = "rdma"))]
            TransportArg::Rdma => anyhow::bail!(
                "this build has no rdma transport: build with `cargo build --release --features rdma` (needs cmake, libnl-3-dev, libnl-route-3-dev, libclang-dev, pkg-config)"
            ),
            #[cfg(feature = "ofi")]
            TransportArg::Ofi => ClusterTransport::Ofi,
            #[cfg(not(feature = "ofi"))]
            TransportArg::Ofi => anyhow::bail!(
                "this build has no ofi transport: build with `cargo build --release --features ofi` (needs libfabric-dev 1.17 or later, libclang-dev, pkg-config)"
            ),
        })
    }
}

/// How the ranks of a job find each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BootstrapArg {
    /// Launcher variables or flags, and a root address.
    Tcp,
    /// MPI (under mpirun).
    Mpi,
}

/// Flags of the cluster driver (ignored by the other drivers).
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Cluster driver: transport between ranks.
    #[arg(long, value_enum, default_value_t = TransportArg::Tcp)]
    pub transport: TransportArg,
    /// Cluster driver: this process's rank (default: from `syncbench launch`, mpirun, PMI or
    /// srun variables).
    #[arg(long, requires = "world_size")]
    pub rank: Option<usize>,
    /// Cluster driver: number of ranks (with --rank).
    #[arg(long, requires = "rank")]
    pub world_size: Option<usize>,
    /// Cluster driver: HOST:PORT where rank 0 listens (default: $SYNCBENCH_ROOT, else
    /// $MASTER_ADDR:$MASTER_PORT, else 127.0.0.1:29517).
    #[arg(long)]
    pub root: Option<String>,
    /// Cluster driver: how ranks find each other: `tcp` (rank from the launcher's variables or
    /// flags, rank 0 at --root) or `mpi` (under mpirun: MPI gives the ranks and broadcasts rank
    /// 0's address and a job token, then is finalized; builds with `--features mpi`).
    #[arg(long, value_enum, default_value_t = BootstrapArg::Tcp)]
    pub bootstrap: BootstrapArg,
    /// Cluster driver: how long ranks wait to connect, and for each other's reports after a
    /// failure, in ms (default: $SYNCBENCH_TIMEOUT_MS, else 30000).
    #[arg(long)]
    pub cluster_timeout_ms: Option<u64>,
    /// Cluster driver: how long a run's endpoints may take to connect to each other once every
    /// rank announced its addresses, in ms; refused or reset connections are retried with
    /// backoff until then (default: $SYNCBENCH_STARTUP_TIMEOUT_MS, else 10000).
    #[arg(long)]
    pub startup_timeout_ms: Option<u64>,
    /// Cluster driver, `--transport ofi`: the libfabric provider, as `fi_info -p` names it
    /// (`tcp;ofi_rxm`, `shm`, `sockets`, `verbs;ofi_rxm`, `efa`, `cxi`); every rank needs the
    /// same. Sets $SYNCBENCH_OFI_PROVIDER for this process, so the manifest records it
    /// (default: $SYNCBENCH_OFI_PROVIDER, else libfabric's first match, which $FI_PROVIDER
    /// narrows; the manifest names the provider opened either way).
    #[arg(long)]
    pub ofi_provider: Option<String>,
}

struct Joined {
    session: Session,
    transport: ClusterTransport,
}

static JOINED: OnceLock<Mutex<Joined>> = OnceLock::new();

/// Joins the job once per process (later calls do nothing).
///
/// # Errors
/// When the rank cannot be determined or the ranks cannot connect (the message names which).
pub fn join(args: &ClusterArgs) -> Result<()> {
    if JOINED.get().is_some() {
        return Ok(());
    }
    let flags = RankFlags {
        rank: args.rank,
        size: args.world_size,
        root: args.root.clone(),
        timeout_ms: args.cluster_timeout_ms,
        startup_ms: args.startup_timeout_ms,
    };
    let transport = args.transport.core()?;
    if let Some(p) = &args.ofi_provider {
        if args.transport != TransportArg::Ofi {
            anyhow::bail!("--ofi-provider {p} needs --transport ofi");
        }
        // Read by every endpoint this process opens; set before any runs (or threads) start.
        std::env::set_var("SYNCBENCH_OFI_PROVIDER", p);
    }
    bench_core::driver::cluster::fault_point::reach("bootstrap");
    let (spec, listener) = match args.bootstrap {
        BootstrapArg::Tcp => (RankSpec::resolve(&flags, &|k| std::env::var(k).ok())?, None),
        BootstrapArg::Mpi => mpi_bootstrap(args)?,
    };
    let (rank, size, root) = (spec.rank, spec.size, spec.root);
    let session = Session::connect_with(spec, listener)
        .with_context(|| format!("rank {rank} of {size} could not join the job at {root}"))?;
    let _ = JOINED.set(Mutex::new(Joined { session, transport }));
    Ok(())
}

#[cfg(feature = "mpi")]
fn mpi_bootstrap(args: &ClusterArgs) -> Result<(RankSpec, Option<std::net::TcpListener>)> {
    let timeout = std::time::Duration::from_millis(args.cluster_timeout_ms.unwrap_or(30_000));
    let startup = std::time::Duration::from_millis(
        args.startup_timeout_ms
            .unwrap_or(bench_core::driver::cluster::rank::DEFAULT_STARTUP_MS),
    );
    Ok(bench_core::driver::cluster::mpi_bootstrap::bootstrap(
        timeout, startup,
    )?)
}

#[cfg(not(feature = "mpi"))]
fn mpi_bootstrap(_args: &ClusterArgs) -> Result<(RankSpec, Option<std::net::TcpListener>)> {
    anyhow::bail!(
        "this build has no MPI bootstrap: build with `cargo build --release --features experiments/mpi` (needs libopenmpi-dev and libclang-dev), or use --bootstrap tcp"
    )
}

/// Runs `f` with the session and transport.
///
/// # Errors
/// When the process has not joined a job (a driver list without `cluster`), or `f`'s error.
pub fn with_session<T>(
    f: impl FnOnce(&mut Session, ClusterTransport) -> bench_core::error::Result<T>,
) -> Result<T> {
    let joined = JOINED.get().context(
        "the cluster driver runs only after the process joined a job (--driver cluster)",
    )?;
    let mut j = joined.lock().expect("cluster session lock");
    let transport = j.transport;
    Ok(f(&mut j.session, transport)?)
}

/// `rank R of N (VARIABLES)` when a launcher started this process as one of several ranks.
pub fn started_as_rank() -> Option<String> {
    bench_core::driver::cluster::rank::RANK_VARIABLES
        .iter()
        .find_map(|(rv, sv)| {
            let r = std::env::var(rv).ok()?;
            let s = std::env::var(sv).ok()?;
            (s.trim().parse::<usize>().ok()? > 1).then(|| format!("rank {r} of {s} ({rv}/{sv})"))
        })
}

/// The transport of the job this process joined, as `--transport` names it (None outside a
/// job).
pub fn transport_name() -> Option<&'static str> {
    JOINED.get().map(
        |j| match j.lock().expect("cluster session lock").transport {
            ClusterTransport::Tcp => "tcp",
            ClusterTransport::Shm => "shm",
            #[cfg(feature = "rdma")]
            ClusterTransport::Rdma => "rdma",
            #[cfg(feature = "ofi")]
            ClusterTransport::Ofi => "ofi",
        },
    )
}

/// The transport of the job this process joined, with what it opened where that varies: for
/// ofi, the provider and libfabric's version (None outside a job).
pub fn transport_detail() -> Option<String> {
    let name = transport_name()?;
    #[cfg(feature = "ofi")]
    if name == "ofi" {
        return Some(match bench_core::transport::ofi::opened_provider() {
            Some(p) => format!("ofi ({p})"),
            None => "ofi (no endpoint opened in this process)".into(),
        });
    }
    Some(name.to_string())
}

/// True once this process joined a cluster job.
pub fn joined() -> bool {
    JOINED.get().is_some()
}

/// True unless this process is a rank other than 0 of a job: only one process writes results.
pub fn is_writer() -> bool {
    JOINED
        .get()
        .is_none_or(|j| j.lock().expect("cluster session lock").session.spec().rank == 0)
}

/// Manifest notes describing the job, if the process joined one.
pub fn notes() -> Vec<String> {
    JOINED.get().map_or_else(Vec::new, |j| {
        let j = j.lock().expect("cluster session lock");
        let s = j.session.spec();
        vec![format!(
            "cluster driver: {} ranks over {:?} (rank from {}; rank 0 at {}); node i ran on rank i mod {}; times are each rank's clock since a barrier at the run's start",
            s.size, j.transport, s.source, s.root, s.size
        )]
    })
}
