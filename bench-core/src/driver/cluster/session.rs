//! The control plane of a multi-process job: every rank keeps one TCP connection to rank 0,
//! opened with a handshake `[magic, job token, rank, size]`, over which ranks exchange endpoint
//! addresses before a run and report results after it. Frames are a little-endian length then
//! JSON; a length above [`MAX_FRAME`] or a frame that does not parse is a peer sending garbage.

use super::rank::RankSpec;
use crate::error::{CoreError, Result};
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

const MAGIC: u64 = 0x5342_4354_4c00_0001; // "SBCTL", version 1
/// Largest control frame accepted (run records of a paper-scale run fit easily).
pub const MAX_FRAME: u64 = 1 << 32;

/// This rank's control connections.
pub struct Session {
    spec: RankSpec,
    /// Address this rank's endpoints listen on (the one its peers reach it by).
    ip: IpAddr,
    links: Links,
    /// Runs started so far (each run's fabric uses its own token).
    runs: u64,
    /// A run failed in a way that leaves the control streams unusable.
    broken: Option<String>,
}

enum Links {
    /// Rank 0: a stream per other rank, index `rank - 1`.
    Root(Vec<TcpStream>),
    /// Every other rank: the stream to rank 0.
    Member(TcpStream),
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("spec", &self.spec)
            .field("ip", &self.ip)
            .field("runs", &self.runs)
            .finish()
    }
}

fn ctl(rank: usize, message: String) -> CoreError {
    CoreError::Cluster { rank, message }
}

impl Session {
    /// Connects the job: rank 0 listens on the root address and waits for every other rank;
    /// the others connect to it, retrying until the spec's timeout.
    ///
    /// # Errors
    /// [`CoreError::Cluster`] when rank 0 cannot listen, a rank cannot reach rank 0 in time,
    /// or not every rank connected in time (naming the missing ranks). Connections with another
    /// job token or a rank out of range are rejected, logged, and do not stop the job.
    pub fn connect(spec: RankSpec) -> Result<Self> {
        Self::connect_with(spec, None)
    }

    /// As [`Session::connect`], with rank 0 listening on `listener` (already bound to the root
    /// address) instead of binding it: the MPI bootstrap binds a free port first and tells the
    /// others.
    ///
    /// # Errors
    /// As [`Session::connect`].
    pub fn connect_with(spec: RankSpec, listener: Option<TcpListener>) -> Result<Self> {
        let deadline = Instant::now() + spec.timeout;
        let (links, ip) = if spec.rank == 0 {
            let listener = match listener {
                Some(l) => l,
                None => TcpListener::bind(spec.root).map_err(|e| {
                    ctl(0, format!("cannot listen on the root address {}: {e} (another job there? choose one with --root or SYNCBENCH_ROOT)", spec.root))
                })?,
            };
            listener
                .set_nonblocking(true)
                .map_err(|e| ctl(0, e.to_string()))?;
            let mut streams: Vec<Option<TcpStream>> = (1..spec.size).map(|_| None).collect();
            let mut ip = spec.root.ip();
            while streams.iter().any(Option::is_none) {
                if Instant::now() > deadline {
                    let missing: Vec<String> = streams
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.is_none())
                        .map(|(i, _)| (i + 1).to_string())
                        .collect();
                    let why = format!(
                        "rank(s) {} did not connect to {} within {} ms",
                        missing.join(", "),
                        spec.root,
                        spec.timeout.as_millis()
                    );
                    // The ranks that did join learn why the job ends, instead of a closed
                    // connection.
                    for s in streams.iter_mut().flatten() {
                        let _ = write_frame(s, &serde_json::json!({ "error": why }));
                    }
                    return Err(ctl(0, why));
                }
                match listener.accept() {
                    Ok((s, peer)) => match admit(&spec, s, deadline) {
                        Ok((r, s)) if streams[r - 1].is_none() => {
                            if let Ok(local) = s.local_addr() {
                                ip = local.ip();
                            }
                            streams[r - 1] = Some(s);
                        }
                        Ok((r, _)) => {
                            eprintln!("cluster: rank 0 rejected a second connection claiming rank {r} from {peer}")
                        }
                        Err(why) => {
                            eprintln!("cluster: rank 0 rejected a connection from {peer}: {why}")
                        }
                    },
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            let streams: Vec<TcpStream> = streams
                .into_iter()
                .map(|s| s.expect("all connected"))
                .collect();
            (Links::Root(streams), ip)
        } else {
            // Rank 0 may not listen yet: retry with backoff (5 ms doubling to 200 ms).
            let mut backoff = Duration::from_millis(5);
            let s = loop {
                match TcpStream::connect_timeout(&spec.root, Duration::from_millis(500)) {
                    Ok(s) => break s,
                    Err(e) if Instant::now() > deadline => {
                        return Err(ctl(
                            spec.rank,
                            format!(
                                "cannot reach rank 0 at {} within {} ms: {e}",
                                spec.root,
                                spec.timeout.as_millis()
                            ),
                        ))
                    }
                    Err(_) => {
                        std::thread::sleep(backoff);
                        backoff = (backoff * 2).min(Duration::from_millis(200));
                    }
                }
            };
            let _ = s.set_nodelay(true);
            let mut s = s;
            let hello = [MAGIC, spec.token, spec.rank as u64, spec.size as u64];
            let bytes: Vec<u8> = hello.iter().flat_map(|w| w.to_le_bytes()).collect();
            s.write_all(&bytes)
                .map_err(|e| ctl(spec.rank, format!("handshake with rank 0: {e}")))?;
            let ip = s
                .local_addr()
                .map_err(|e| ctl(spec.rank, e.to_string()))?
                .ip();
            (Links::Member(s), ip)
        };
        let mut session = Session {
            spec,
            ip,
            links,
            runs: 0,
            broken: None,
        };
        // Rank 0 answers every handshake once all ranks are in: nobody starts early. Bounded
        // by the deadline: a process that holds the root port but is not rank 0 (or a rank
        // that stopped) must not hang the others.
        // A member waits a grace period longer than rank 0, so that when a rank never joins,
        // rank 0's verdict naming it (sent at rank 0's deadline) arrives before the member's
        // own timeout, instead of racing it.
        let grace = match session.links {
            Links::Root(_) => Duration::ZERO,
            Links::Member(_) => Duration::from_millis(1000),
        };
        let wait = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(100))
            + grace;
        session.set_read_timeout(Some(wait));
        let rank = session.spec.rank;
        session.exchange(&()).map_err(|e| {
            ctl(
                rank,
                format!(
                    "the job did not start within {} ms: {e}",
                    session.spec.timeout.as_millis()
                ),
            )
        })?;
        session.set_read_timeout(None);
        Ok(session)
    }

    fn set_read_timeout(&self, t: Option<Duration>) {
        match &self.links {
            Links::Root(s) => s.iter().for_each(|s| {
                let _ = s.set_read_timeout(t);
            }),
            Links::Member(s) => {
                let _ = s.set_read_timeout(t);
            }
        }
    }

    /// The spec this session was made from.
    pub fn spec(&self) -> &RankSpec {
        &self.spec
    }

    /// Address this rank's endpoints listen on.
    pub fn ip(&self) -> IpAddr {
        self.ip
    }

    /// Starts a run: its index, from which the run's fabric token derives.
    ///
    /// # Errors
    /// [`CoreError::Cluster`] when an earlier run left the control connections unusable.
    pub fn begin_run(&mut self) -> Result<u64> {
        if let Some(why) = &self.broken {
            return Err(ctl(
                self.spec.rank,
                format!("the job cannot run again: {why}"),
            ));
        }
        self.runs += 1;
        Ok(self.runs)
    }

    /// Marks the control connections unusable (a rank was lost or did not report).
    pub fn mark_broken(&mut self, why: &str) {
        self.broken.get_or_insert_with(|| why.to_string());
    }

    /// All-gather: every rank contributes `mine` and gets every rank's value, by rank.
    ///
    /// # Errors
    /// [`CoreError::Cluster`] naming the rank whose connection failed or sent garbage.
    pub fn exchange<T: serde::Serialize + serde::de::DeserializeOwned>(
        &mut self,
        mine: &T,
    ) -> Result<Vec<T>> {
        let result = match &mut self.links {
            Links::Root(streams) => (|| {
                let mut all = vec![serde_json::to_value(mine)?];
                for (i, s) in streams.iter_mut().enumerate() {
                    all.push(read_frame(s).map_err(|e| ctl(i + 1, e))?);
                }
                for (i, s) in streams.iter_mut().enumerate() {
                    write_frame(s, &all).map_err(|e| ctl(i + 1, e))?;
                }
                Ok(all)
            })(),
            Links::Member(s) => write_frame(s, mine)
                .and_then(|()| read_frame(s))
                .map_err(|e| ctl(0, e))
                .and_then(|v| match v {
                    serde_json::Value::Array(all) => Ok(all),
                    serde_json::Value::Object(m)
                        if m.get("error").is_some_and(|e| e.is_string()) =>
                    {
                        Err(ctl(0, m["error"].as_str().unwrap_or_default().to_string()))
                    }
                    _ => Err(ctl(0, "sent a control frame that is not a list".into())),
                }),
        };
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                self.mark_broken(&e.to_string());
                return Err(e);
            }
        };
        let out = result
            .into_iter()
            .enumerate()
            .map(|(r, v)| {
                serde_json::from_value(v)
                    .map_err(|e| ctl(r, format!("sent a control frame of the wrong shape: {e}")))
            })
            .collect::<Result<Vec<T>>>();
        if out.is_err() {
            self.mark_broken("a rank sent garbage on the control connection");
        }
        out
    }

    /// Clones of the control streams for a run's watcher threads: rank 0 gets one per other
    /// rank (index `rank - 1`), the others one to rank 0.
    ///
    /// # Errors
    /// [`CoreError::Cluster`] when a socket cannot be cloned.
    pub fn streams(&self) -> Result<Vec<TcpStream>> {
        let rank = self.spec.rank;
        match &self.links {
            Links::Root(s) => s
                .iter()
                .map(|s| s.try_clone().map_err(|e| ctl(rank, e.to_string())))
                .collect(),
            Links::Member(s) => Ok(vec![s.try_clone().map_err(|e| ctl(rank, e.to_string()))?]),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        match &self.links {
            Links::Root(s) => s.iter().for_each(|s| {
                let _ = s.shutdown(Shutdown::Both);
            }),
            Links::Member(s) => {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }
}

/// Checks a new connection's handshake at rank 0; returns the rank it claims.
fn admit(
    spec: &RankSpec,
    mut s: TcpStream,
    deadline: Instant,
) -> std::result::Result<(usize, TcpStream), String> {
    let _ = s.set_nonblocking(false);
    let _ = s.set_nodelay(true);
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100))
        .min(Duration::from_secs(5));
    let _ = s.set_read_timeout(Some(wait));
    let mut hello = [0u8; 32];
    s.read_exact(&mut hello)
        .map_err(|e| format!("no handshake ({e})"))?;
    let w = |i: usize| u64::from_le_bytes(hello[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    if w(0) != MAGIC {
        return Err("not a syncbench rank".into());
    }
    if w(1) != spec.token {
        return Err("wrong job token".into());
    }
    let (rank, size) = (w(2) as usize, w(3) as usize);
    if size != spec.size || rank == 0 || rank >= size {
        return Err(format!(
            "claims rank {rank} of {size}, but this job has {} ranks",
            spec.size
        ));
    }
    let _ = s.set_read_timeout(None);
    Ok((rank, s))
}

/// Writes one frame: length, then `value` as JSON.
pub(crate) fn write_frame<T: serde::Serialize + ?Sized>(
    s: &mut TcpStream,
    value: &T,
) -> std::result::Result<(), String> {
    let body = serde_json::to_vec(value).map_err(|e| e.to_string())?;
    let mut frame = (body.len() as u64).to_le_bytes().to_vec();
    frame.extend_from_slice(&body);
    s.write_all(&frame)
        .map_err(|e| format!("control connection lost while sending ({e})"))
}

/// Reads one frame as JSON.
pub(crate) fn read_frame(s: &mut TcpStream) -> std::result::Result<serde_json::Value, String> {
    let mut len = [0u8; 8];
    s.read_exact(&mut len).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            "control connection closed (the process ended or was killed)".to_string()
        } else if matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            "no answer on the control connection in time (is the process at that address a rank of this job?)".to_string()
        } else {
            format!("control connection lost ({e})")
        }
    })?;
    let len = u64::from_le_bytes(len);
    if len > MAX_FRAME {
        return Err(format!(
            "sent a control frame of {len} bytes (limit {MAX_FRAME}); garbage on the connection"
        ));
    }
    let mut body = vec![0u8; len as usize];
    s.read_exact(&mut body)
        .map_err(|e| format!("control connection lost mid-frame ({e})"))?;
    serde_json::from_slice(&body)
        .map_err(|e| format!("sent a control frame that is not JSON ({e})"))
}
