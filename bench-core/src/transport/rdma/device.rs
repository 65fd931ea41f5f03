//! An opened RDMA device: its context, protection domain and port 1's addressing.

use super::err;
use crate::error::Result;
use ibverbs_sys as ffi;
use std::sync::Arc;

/// An opened RDMA device: context, protection domain, port 1 and its addressing.
pub struct RdmaDevice {
    ctx: *mut ffi::ibv_context,
    pd: *mut ffi::ibv_pd,
    name: String,
    lid: u16,
    gid: [u8; 16],
    gid_index: u8,
    mtu: ffi::ibv_mtu,
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
            "RdmaDevice({}, lid {}, gid index {})",
            self.name, self.lid, self.gid_index
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

    /// Opens `name` (else `$SYNCBENCH_RDMA_DEVICE`, else the first device), port 1.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when there is no device, none of that name, or the device
    /// cannot be opened or queried.
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
        let gid_index: u8 = match std::env::var("SYNCBENCH_RDMA_GID") {
            Ok(g) => g
                .trim()
                .parse()
                .map_err(|_| err(format!("SYNCBENCH_RDMA_GID={g:?} is not a GID index")))?,
            Err(_) => 0,
        };
        // SAFETY: plain verbs calls; every pointer is checked before use and freed in Drop (or
        // here on failure).
        unsafe {
            let mut n = 0;
            let list = ffi::ibv_get_device_list(&mut n);
            if list.is_null() || index >= n as usize {
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
            let mut port: ffi::ibv_port_attr = Default::default();
            if ffi::ibv_query_port(
                ctx,
                1,
                &mut port as *mut ffi::ibv_port_attr as *mut ffi::_compat_ibv_port_attr,
            ) != 0
            {
                ffi::ibv_close_device(ctx);
                return Err(err(format!("cannot query port 1 of {}", names[index])));
            }
            let mut gid: ffi::ibv_gid = Default::default();
            if ffi::ibv_query_gid(ctx, 1, gid_index as i32, &mut gid) != 0 {
                ffi::ibv_close_device(ctx);
                return Err(err(format!(
                    "cannot read GID {gid_index} of {}",
                    names[index]
                )));
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
                lid: port.lid,
                gid: gid.raw,
                gid_index,
                mtu: port.active_mtu.min(ffi::IBV_MTU_4096),
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

    /// Port 1's LID (0 on RoCE, where addressing is by GID).
    pub(super) fn lid(&self) -> u16 {
        self.lid
    }

    /// The GID this process uses, and its index.
    pub(super) fn gid(&self) -> ([u8; 16], u8) {
        (self.gid, self.gid_index)
    }

    /// The path MTU queue pairs use (port 1's active MTU, at most 4096).
    pub(super) fn mtu(&self) -> ffi::ibv_mtu {
        self.mtu
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
