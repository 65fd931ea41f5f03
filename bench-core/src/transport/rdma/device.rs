//! An opened RDMA device: its context, protection domain and one port's addressing (the port,
//! its state, link layer, GID and MTU, chosen and checked by [`super::addressing`]), and the
//! fatal asynchronous events it reported ([`super::async_events`]).

use super::addressing::{self, GidEntry, LINK_ETHERNET};
use super::async_events::{self, AsyncFailure, Subject, SubjectKind};
use super::err;
use crate::error::Result;
use ibverbs_sys as ffi;
use std::sync::{Arc, Mutex, PoisonError};

/// Fatal asynchronous events kept per device (a device that reports more is long dead).
const MAX_ASYNC_FAILURES: usize = 64;

/// An opened RDMA device: context, protection domain, one port and its addressing.
pub struct RdmaDevice {
    ctx: *mut ffi::ibv_context,
    pd: *mut ffi::ibv_pd,
    name: String,
    port: u8,
    link_layer: u8,
    lid: u16,
    gid: [u8; 16],
    gid_index: u8,
    mtu: ffi::ibv_mtu,
    /// Entries a completion queue may have.
    max_cqe: usize,
    /// Traffic class of the global route header (`SYNCBENCH_RDMA_TCLASS`).
    tclass: u8,
    /// Hop limit of the global route header (`SYNCBENCH_RDMA_HOP_LIMIT`).
    hop_limit: u8,
    /// The fatal asynchronous events read so far ([`RdmaDevice::async_failures`]); every
    /// endpoint of the device reads them and reports those that concern it.
    events: Mutex<Vec<AsyncFailure>>,
}

// SAFETY: verbs objects may be used from any thread (libibverbs is thread-safe); the pointers
// are only freed in Drop.
unsafe impl Send for RdmaDevice {}
// SAFETY: as above.
unsafe impl Sync for RdmaDevice {}

impl std::fmt::Debug for RdmaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RdmaDevice({} port {}, lid {}, gid index {})",
            self.name, self.port, self.lid, self.gid_index
        )
    }
}

impl RdmaDevice {
    /// Names of the RDMA devices present.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when the verbs library finds no RDMA subsystem.
    pub fn names() -> Result<Vec<String>> {
        let list = ibverbs::devices().map_err(|e| {
            err(format!(
                "no RDMA devices ({e}); on a machine without RDMA hardware, SoftRoCE (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0) provides one"
            ))
        })?;
        Ok(list
            .iter()
            .filter_map(|d| d.name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }

    /// Opens `name` (else `$SYNCBENCH_RDMA_DEVICE`, else the first device), on port
    /// `$SYNCBENCH_RDMA_PORT` (else 1), which must be ACTIVE (and on InfiniBand have a LID);
    /// the GID index is `$SYNCBENCH_RDMA_GID`, else chosen from the port's GID table
    /// ([`addressing::choose_gid`]: on RoCE the IPv4-mapped RoCE v2 entry). The global route
    /// header's traffic class is `$SYNCBENCH_RDMA_TCLASS` (else 0) and its hop limit
    /// `$SYNCBENCH_RDMA_HOP_LIMIT` (else 64). The context's asynchronous event channel is made
    /// non-blocking, so that endpoints can poll it in their health checks.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when there is no device, none of that name, the device cannot
    /// be opened or queried, the port cannot carry traffic, or an environment variable above
    /// holds no valid value.
    pub fn open(name: Option<&str>) -> Result<Arc<Self>> {
        let wanted = name
            .map(str::to_string)
            .or_else(|| std::env::var("SYNCBENCH_RDMA_DEVICE").ok());
        let names = Self::names()?;
        if names.is_empty() {
            return Err(err("no RDMA devices present (SoftRoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0)"));
        }
        let index = match &wanted {
            Some(w) => names.iter().position(|n| n == w).ok_or_else(|| {
                err(format!(
                    "no RDMA device named '{w}' (present: {})",
                    names.join(", ")
                ))
            })?,
            None => 0,
        };
        let explicit_gid: Option<u8> = match std::env::var("SYNCBENCH_RDMA_GID") {
            Ok(g) => Some(
                g.trim()
                    .parse()
                    .map_err(|_| err(format!("SYNCBENCH_RDMA_GID={g:?} is not a GID index")))?,
            ),
            Err(_) => None,
        };
        let port_num =
            addressing::port_number(std::env::var("SYNCBENCH_RDMA_PORT").ok().as_deref())?;
        let tclass =
            addressing::traffic_class(std::env::var("SYNCBENCH_RDMA_TCLASS").ok().as_deref())?;
        let hop_limit =
            addressing::hop_limit(std::env::var("SYNCBENCH_RDMA_HOP_LIMIT").ok().as_deref())?;
        // SAFETY: plain verbs calls; every pointer is checked before use and freed in Drop (or
        // here on failure).
        unsafe {
            let mut n = 0;
            let list = ffi::ibv_get_device_list(&mut n);
            if list.is_null() || index >= n as usize {
                if !list.is_null() {
                    ffi::ibv_free_device_list(list);
                }
                return Err(err("the device list changed while opening"));
            }
            let ctx = ffi::ibv_open_device(*list.add(index));
            ffi::ibv_free_device_list(list);
            if ctx.is_null() {
                return Err(err(format!(
                    "cannot open device {}: {}",
                    names[index],
                    std::io::Error::last_os_error()
                )));
            }
            // health() reads asynchronous events without waiting for one.
            let fd = (*ctx).async_fd;
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                let e = std::io::Error::last_os_error();
                ffi::ibv_close_device(ctx);
                return Err(err(format!(
                    "cannot make the event channel of {} non-blocking: {e}",
                    names[index]
                )));
            }
            let mut port: ffi::ibv_port_attr = Default::default();
            if ffi::ibv_query_port(
                ctx,
                port_num,
                &mut port as *mut ffi::ibv_port_attr as *mut ffi::_compat_ibv_port_attr,
            ) != 0
            {
                ffi::ibv_close_device(ctx);
                return Err(err(format!(
                    "cannot query port {port_num} of {} (SYNCBENCH_RDMA_PORT; `ibv_devinfo -d {}` lists its ports)",
                    names[index], names[index]
                )));
            }
            if let Err(e) = addressing::check_port(
                &names[index],
                port_num,
                port.state,
                port.link_layer,
                port.lid,
            ) {
                ffi::ibv_close_device(ctx);
                return Err(e);
            }
            let table: Vec<GidEntry> = if explicit_gid.is_none() && port.link_layer == LINK_ETHERNET
            {
                (0..port.gid_tbl_len.clamp(0, 256))
                    .filter_map(|i| {
                        let mut g: ffi::ibv_gid = Default::default();
                        (ffi::ibv_query_gid(ctx, port_num, i, &mut g) == 0).then(|| GidEntry {
                            index: i as u8,
                            gid: g.raw,
                            roce_v2: roce_v2(&names[index], port_num, i),
                        })
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let gid_index = match addressing::choose_gid(explicit_gid, port.link_layer, &table) {
                Ok(i) => i,
                Err(e) => {
                    ffi::ibv_close_device(ctx);
                    return Err(e);
                }
            };
            let mut gid: ffi::ibv_gid = Default::default();
            if ffi::ibv_query_gid(ctx, port_num, gid_index as i32, &mut gid) != 0 {
                ffi::ibv_close_device(ctx);
                return Err(err(format!(
                    "cannot read GID {gid_index} of {}",
                    names[index]
                )));
            }
            let mut attr: ffi::ibv_device_attr = Default::default();
            if ffi::ibv_query_device(ctx, &mut attr) != 0 {
                ffi::ibv_close_device(ctx);
                return Err(err(format!("cannot query the limits of {}", names[index])));
            }
            let pd = ffi::ibv_alloc_pd(ctx);
            if pd.is_null() {
                ffi::ibv_close_device(ctx);
                return Err(err(format!(
                    "cannot allocate a protection domain on {}",
                    names[index]
                )));
            }
            Ok(Arc::new(RdmaDevice {
                ctx,
                pd,
                name: names[index].clone(),
                port: port_num,
                link_layer: port.link_layer,
                lid: port.lid,
                gid: gid.raw,
                gid_index,
                mtu: port.active_mtu.min(ffi::IBV_MTU_4096),
                max_cqe: attr.max_cqe.max(0) as usize,
                tclass,
                hop_limit,
                events: Mutex::new(Vec::new()),
            }))
        }
    }

    /// The verbs context.
    pub(super) fn context(&self) -> *mut ffi::ibv_context {
        self.ctx
    }

    /// The protection domain every object of this device's endpoints lives in.
    pub(super) fn pd(&self) -> *mut ffi::ibv_pd {
        self.pd
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The port's LID (0 on RoCE, where addressing is by GID).
    pub(super) fn lid(&self) -> u16 {
        self.lid
    }

    /// The port queue pairs use.
    pub(super) fn port(&self) -> u8 {
        self.port
    }

    /// The port's link layer (verbs value; [`LINK_ETHERNET`] on RoCE).
    pub(super) fn link_layer(&self) -> u8 {
        self.link_layer
    }

    /// The traffic class of the global route header (`$SYNCBENCH_RDMA_TCLASS`, else 0).
    pub(super) fn traffic_class(&self) -> u8 {
        self.tclass
    }

    /// The hop limit of the global route header (`$SYNCBENCH_RDMA_HOP_LIMIT`, else 64).
    pub(super) fn hop_limit(&self) -> u8 {
        self.hop_limit
    }

    /// The GID this process uses, and its index.
    pub(super) fn gid(&self) -> ([u8; 16], u8) {
        (self.gid, self.gid_index)
    }

    /// Entries a completion queue of this device may have.
    pub(super) fn max_cqe(&self) -> usize {
        self.max_cqe
    }

    /// The port's active MTU (at most 4096); a connection uses the smaller of both ends'.
    pub(super) fn mtu(&self) -> ffi::ibv_mtu {
        self.mtu
    }

    /// The fatal asynchronous events ([`async_events::is_fatal`]) this device has reported so
    /// far, after reading those pending. Every event read is acknowledged at once (destroying a
    /// queue pair waits for its events' acknowledgements); informational ones are dropped.
    pub(super) fn async_failures(&self) -> Vec<AsyncFailure> {
        let mut seen = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let mut ev = ffi::ibv_async_event::default();
            // SAFETY: the context is valid until Drop, and its event channel is non-blocking
            // (open): with no event pending this returns -1 at once; `ev` is a valid
            // out-parameter.
            if unsafe { ffi::ibv_get_async_event(self.ctx, &mut ev) } != 0 {
                break;
            }
            let code = ev.event_type;
            // SAFETY: libibverbs fills the member of `element` that the event's type names
            // (async_events::subject_kind); a queue pair an event names is not destroyed before
            // the event is acknowledged (below), so its number can be read.
            let subject = unsafe {
                match async_events::subject_kind(code) {
                    SubjectKind::Qp if !ev.element.qp.is_null() => {
                        Subject::Qp((*ev.element.qp).qp_num)
                    }
                    SubjectKind::Cq => Subject::Cq(ev.element.cq as usize),
                    SubjectKind::Port => Subject::Port(ev.element.port_num),
                    SubjectKind::Device => Subject::Device,
                    SubjectKind::Qp | SubjectKind::Srq | SubjectKind::Wq => Subject::Other,
                }
            };
            // SAFETY: `ev` was filled by ibv_get_async_event above and is acknowledged once.
            unsafe { ffi::ibv_ack_async_event(&mut ev) };
            if async_events::is_fatal(code) && seen.len() < MAX_ASYNC_FAILURES {
                seen.push(AsyncFailure { code, subject });
            }
        }
        seen.clone()
    }
}

impl Drop for RdmaDevice {
    fn drop(&mut self) {
        // SAFETY: created in open and freed only here; every object made in this protection
        // domain (registrations, completion queues, queue pairs) holds an Arc to the device,
        // so none is left.
        unsafe {
            ffi::ibv_dealloc_pd(self.pd);
            ffi::ibv_close_device(self.ctx);
        }
    }
}

/// Whether GID `index` of `port` of `device` is RoCE v2, from sysfs (`gid_attrs/types`; verbs
/// before rdma-core's ibv_query_gid_ex do not say). False where sysfs does not tell.
fn roce_v2(device: &str, port: u8, index: i32) -> bool {
    std::fs::read_to_string(format!(
        "/sys/class/infiniband/{device}/ports/{port}/gid_attrs/types/{index}"
    ))
    .is_ok_and(|t| t.to_ascii_lowercase().contains("v2"))
}
