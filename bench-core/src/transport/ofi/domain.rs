//! One node's libfabric objects, opened together and closed once in reverse: the provider's
//! `fi_info`, its fabric and domain, an address vector (FI_AV_TABLE: fi_addr `j` is node `j`),
//! one completion queue (FI_CQ_FORMAT_DATA, for sends and for the remote data of writes that
//! land here) and one reliable-datagram (FI_EP_RDM) endpoint bound to both.

use super::err;
use super::ffi;
use crate::error::Result;
use std::ffi::{c_void, CString};
use std::net::IpAddr;
use std::ptr::null_mut;

/// What the backend asks of a provider, and what a provider it cannot use lacks.
///
/// - capabilities: one-sided writes, issued and received (FI_RMA, FI_WRITE, FI_REMOTE_WRITE);
/// - endpoint: reliable, connectionless (FI_EP_RDM), safe to use from the progress thread
///   and the caller at once (FI_THREAD_SAFE);
/// - ordering: writes from one endpoint to another land in posting order (FI_ORDER_WAW), the
///   rule the notification after a slot write relies on (see the module's documentation);
/// - memory registration: every mode but FI_MR_ENDPOINT may be asked (LOCAL: descriptors are
///   passed; VIRT_ADDR: remote addresses are virtual; ALLOCATED; PROV_KEY: keys are read);
/// - modes: none (no FI_CONTEXT: a request's id travels as its context pointer; no
///   FI_RX_CQ_DATA: remote data needs no posted receive);
/// - remote completion data of at least 4 bytes, which a notification's immediate needs.
fn hints(provider: Option<&str>) -> Result<*mut ffi::fi_info> {
    // SAFETY: fi_allocinfo returns a zeroed fi_info with its attribute structures, or NULL.
    let h = unsafe { ffi::allocinfo() };
    if h.is_null() {
        return Err(err("fi_allocinfo failed (out of memory)"));
    }
    // SAFETY: h and its attribute structures were allocated above; strings set in them must
    // be malloc'ed, as fi_freeinfo frees them.
    unsafe {
        (*h).caps = (ffi::FI_RMA | ffi::FI_WRITE | ffi::FI_REMOTE_WRITE) as u64;
        (*h).mode = 0;
        (*(*h).ep_attr).type_ = ffi::fi_ep_type_FI_EP_RDM;
        (*(*h).domain_attr).threading = ffi::fi_threading_FI_THREAD_SAFE;
        (*(*h).domain_attr).mr_mode =
            (ffi::FI_MR_LOCAL | ffi::FI_MR_VIRT_ADDR | ffi::FI_MR_ALLOCATED | ffi::FI_MR_PROV_KEY)
                as i32;
        (*(*h).tx_attr).msg_order = u64::from(ffi::FI_ORDER_WAW);
        if let Some(p) = provider {
            let c = CString::new(p).map_err(|_| err(format!("provider name {p:?} has a NUL")))?;
            (*(*h).fabric_attr).prov_name = libc::strdup(c.as_ptr());
        }
    }
    Ok(h)
}

/// The provider `SYNCBENCH_OFI_PROVIDER` names (as `fi_info -p` takes it: `tcp;ofi_rxm`,
/// `shm`, `sockets`, `verbs;ofi_rxm`), else none: libfabric's first match, which
/// `FI_PROVIDER` also narrows.
pub fn provider_from_env() -> Option<String> {
    std::env::var("SYNCBENCH_OFI_PROVIDER")
        .ok()
        .filter(|p| !p.is_empty())
}

/// The first provider this process opened, with libfabric's version ([`super::opened_provider`]).
pub(super) static OPENED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// One node's fabric, domain, address vector, completion queue and endpoint.
pub(crate) struct Domain {
    pub(crate) info: *mut ffi::fi_info,
    pub(crate) fabric: *mut ffi::fid_fabric,
    pub(crate) domain: *mut ffi::fid_domain,
    pub(crate) av: *mut ffi::fid_av,
    pub(crate) cq: *mut ffi::fid_cq,
    pub(crate) ep: *mut ffi::fid_ep,
}

// SAFETY: the domain is opened FI_THREAD_SAFE: every object may be used from any thread, and
// at once from several.
unsafe impl Send for Domain {}
// SAFETY: as above.
unsafe impl Sync for Domain {}

/// A libfabric call's return code as a result naming the call.
fn check(rc: i64, what: &str) -> Result<()> {
    if rc < 0 {
        Err(err(format!("{what} failed: {}", ffi::strerror(rc))))
    } else {
        Ok(())
    }
}

impl Domain {
    /// Opens a provider's objects for an endpoint of `nodes` peers at most, with a
    /// completion queue of `cq_size` entries. `source`: the address to bind an endpoint of an
    /// IP provider to (the sockets provider cannot publish a wildcard name).
    ///
    /// # Errors
    /// No provider matches (naming what was asked), or an object cannot be opened; what was
    /// opened is closed.
    pub(crate) fn open(
        provider: Option<&str>,
        source: Option<IpAddr>,
        nodes: usize,
        cq_size: usize,
    ) -> Result<Domain> {
        let hints = hints(provider)?;
        let asked = provider.unwrap_or("any provider");
        let mut info: *mut ffi::fi_info = null_mut();
        // SAFETY: hints is a valid fi_info; info receives a list fi_freeinfo frees.
        let rc = unsafe {
            ffi::fi_getinfo(
                ffi::version(1, 17),
                std::ptr::null(),
                std::ptr::null(),
                0,
                hints,
                &mut info,
            )
        };
        if rc != 0 || info.is_null() {
            // SAFETY: hints came from fi_allocinfo.
            unsafe { ffi::fi_freeinfo(hints) };
            return Err(err(format!(
                "no libfabric provider ({asked}) offers reliable-datagram endpoints with one-sided writes, \
                 write-after-write ordering, thread safety and no required modes: {} (`fi_info -t FI_EP_RDM -c FI_RMA` lists what is installed)",
                ffi::strerror(i64::from(rc))
            )));
        }
        // An IP provider's endpoint is bound to the node's address, so that its name reaches
        // other hosts (and is no wildcard).
        // SAFETY: info is the non-empty list fi_getinfo returned.
        let ip_format = unsafe {
            matches!(
                (*info).addr_format,
                ffi::FI_SOCKADDR_IN | ffi::FI_SOCKADDR_IN6
            )
        };
        if let (true, Some(ip)) = (ip_format, source) {
            let node = CString::new(ip.to_string()).expect("an IP address has no NUL");
            let mut bound: *mut ffi::fi_info = null_mut();
            // SAFETY: as above; the hints now name the provider found.
            let rc = unsafe {
                if (*(*hints).fabric_attr).prov_name.is_null() {
                    (*(*hints).fabric_attr).prov_name =
                        libc::strdup((*(*info).fabric_attr).prov_name);
                }
                ffi::fi_getinfo(
                    ffi::version(1, 17),
                    node.as_ptr(),
                    std::ptr::null(),
                    ffi::FI_SOURCE,
                    hints,
                    &mut bound,
                )
            };
            if rc == 0 && !bound.is_null() {
                // SAFETY: the first list is replaced by the bound one.
                unsafe { ffi::fi_freeinfo(info) };
                info = bound;
            }
        }
        // SAFETY: hints came from fi_allocinfo.
        unsafe { ffi::fi_freeinfo(hints) };
        let mut d = Domain {
            info,
            fabric: null_mut(),
            domain: null_mut(),
            av: null_mut(),
            cq: null_mut(),
            ep: null_mut(),
        };
        let data = d.cq_data_size();
        if data < 4 {
            return Err(err(format!(
                "provider {} carries {data} bytes of remote completion data; notifications need 4",
                d.provider()
            )));
        }
        // SAFETY: each call takes objects opened before it, and stores what it opens in `d`,
        // whose Drop closes whatever was opened, in reverse order.
        unsafe {
            check(
                i64::from(ffi::fi_fabric(
                    (*info).fabric_attr,
                    &mut d.fabric,
                    null_mut(),
                )),
                "fi_fabric",
            )?;
            check(
                i64::from(ffi::domain(d.fabric, info, &mut d.domain)),
                "fi_domain",
            )?;
            let mut av_attr = ffi::fi_av_attr {
                type_: ffi::fi_av_type_FI_AV_TABLE,
                count: nodes.max(1),
                ..Default::default()
            };
            check(
                i64::from(ffi::av_open(d.domain, &mut av_attr, &mut d.av)),
                "fi_av_open",
            )?;
            let mut cq_attr = ffi::fi_cq_attr {
                size: cq_size,
                format: ffi::fi_cq_format_FI_CQ_FORMAT_DATA,
                wait_obj: ffi::fi_wait_obj_FI_WAIT_NONE,
                ..Default::default()
            };
            check(
                i64::from(ffi::cq_open(d.domain, &mut cq_attr, &mut d.cq)),
                "fi_cq_open",
            )?;
            check(
                i64::from(ffi::endpoint(d.domain, info, &mut d.ep)),
                "fi_endpoint",
            )?;
            check(
                i64::from(ffi::bind(&mut (*d.ep).fid, &mut (*d.av).fid, 0)),
                "fi_ep_bind (address vector)",
            )?;
            check(
                i64::from(ffi::bind(
                    &mut (*d.ep).fid,
                    &mut (*d.cq).fid,
                    ffi::FI_TRANSMIT as u64 | ffi::FI_RECV as u64 | ffi::FI_SELECTIVE_COMPLETION,
                )),
                "fi_ep_bind (completion queue)",
            )?;
            check(i64::from(ffi::enable(&mut (*d.ep).fid)), "fi_enable")?;
        }
        OPENED.get_or_init(|| {
            // SAFETY: fi_version takes nothing and returns the library's version.
            let v = unsafe { ffi::fi_version() };
            format!("{}, libfabric {}.{}", d.provider(), v >> 16, v & 0xFFFF)
        });
        Ok(d)
    }

    /// The provider's name, as `fi_info -p` takes it.
    pub(crate) fn provider(&self) -> String {
        // SAFETY: info is the list fi_getinfo returned; its strings live as long as it.
        unsafe { ffi::cstr((*(*self.info).fabric_attr).prov_name) }
    }

    fn cq_data_size(&self) -> usize {
        // SAFETY: as above.
        unsafe { (*(*self.info).domain_attr).cq_data_size }
    }

    /// The memory registration modes the provider asks (FI_MR_* bits).
    pub(crate) fn mr_mode(&self) -> u32 {
        // SAFETY: as above.
        unsafe { (*(*self.info).domain_attr).mr_mode as u32 }
    }

    /// The endpoint's name, as peers insert it in their address vectors.
    ///
    /// # Errors
    /// `fi_getname` failed.
    pub(crate) fn name(&self) -> Result<Vec<u8>> {
        let mut len = 0usize;
        // SAFETY: a NULL buffer of length 0 asks the length (-FI_ETOOSMALL).
        unsafe { ffi::getname(self.ep, null_mut(), &mut len) };
        let mut name = vec![0u8; len.max(1)];
        let mut len = name.len();
        // SAFETY: name has len bytes.
        let rc = unsafe { ffi::getname(self.ep, name.as_mut_ptr().cast::<c_void>(), &mut len) };
        check(i64::from(rc), "fi_getname")?;
        name.truncate(len);
        Ok(name)
    }

    /// Inserts `name` in the address vector; returns its fi_addr.
    ///
    /// # Errors
    /// The provider did not take the name (`fi_av_insert` did not insert one address).
    pub(crate) fn insert(&self, name: &[u8]) -> Result<ffi::fi_addr_t> {
        let mut addr: ffi::fi_addr_t = ffi::ADDR_UNSPEC;
        // SAFETY: name is one address in the provider's format (its getname output).
        let rc = unsafe { ffi::av_insert(self.av, name.as_ptr().cast::<c_void>(), 1, &mut addr) };
        if rc != 1 {
            return Err(err(format!(
                "fi_av_insert of a {}-byte name inserted {rc} addresses",
                name.len()
            )));
        }
        Ok(addr)
    }
}

impl Domain {
    /// Closes the endpoint ahead of the rest (cancelling what it has queued), so that the
    /// provider reads no registered buffer after the registrations close.
    pub(crate) fn close_endpoint(&mut self) {
        if !self.ep.is_null() {
            // SAFETY: the endpoint was opened by open and is closed once.
            unsafe { ffi::close(self.ep.cast::<ffi::fid>()) };
            self.ep = std::ptr::null_mut();
        }
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        // SAFETY: each object was opened by Domain::open (or is NULL), is closed once, and
        // after every object opened on it (the endpoint before what it is bound to).
        unsafe {
            for fid in [
                self.ep.cast::<ffi::fid>(),
                self.cq.cast(),
                self.av.cast(),
                self.domain.cast(),
                self.fabric.cast(),
            ] {
                if !fid.is_null() {
                    ffi::close(fid);
                }
            }
            if !self.info.is_null() {
                ffi::fi_freeinfo(self.info);
            }
        }
    }
}
