//! libfabric's C interface as bindgen generated it from the installed headers (build.rs), and
//! the static-inline calls of those headers written out in Rust: each reaches its provider
//! through the ops table it names, as the header's inline function does, so no C shim is
//! built.

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    unsafe_op_in_unsafe_fn,
    clippy::all,
    clippy::pedantic
)]

include!(concat!(env!("OUT_DIR"), "/ofi.rs"));

/// `FI_VERSION(major, minor)`.
pub const fn version(major: u32, minor: u32) -> u32 {
    (major << 16) | minor
}

/// `FI_ADDR_UNSPEC`.
pub const ADDR_UNSPEC: fi_addr_t = u64::MAX;

/// `fi_allocinfo()`: a zeroed `fi_info` with its attribute structures, freed by `fi_freeinfo`.
pub unsafe fn allocinfo() -> *mut fi_info {
    fi_dupinfo(std::ptr::null())
}

/// `fi_close(fid)`.
pub unsafe fn close(fid: *mut fid) -> i32 {
    ((*(*fid).ops).close.expect("fi_ops.close"))(fid)
}

/// `fi_domain(fabric, info, &domain, NULL)`.
pub unsafe fn domain(
    fabric: *mut fid_fabric,
    info: *mut fi_info,
    out: *mut *mut fid_domain,
) -> i32 {
    ((*(*fabric).ops).domain.expect("fi_ops_fabric.domain"))(
        fabric,
        info,
        out,
        std::ptr::null_mut(),
    )
}

/// `fi_endpoint(domain, info, &ep, NULL)`.
pub unsafe fn endpoint(domain: *mut fid_domain, info: *mut fi_info, out: *mut *mut fid_ep) -> i32 {
    ((*(*domain).ops).endpoint.expect("fi_ops_domain.endpoint"))(
        domain,
        info,
        out,
        std::ptr::null_mut(),
    )
}

/// `fi_av_open(domain, attr, &av, NULL)`.
pub unsafe fn av_open(
    domain: *mut fid_domain,
    attr: *mut fi_av_attr,
    out: *mut *mut fid_av,
) -> i32 {
    ((*(*domain).ops).av_open.expect("fi_ops_domain.av_open"))(
        domain,
        attr,
        out,
        std::ptr::null_mut(),
    )
}

/// `fi_cq_open(domain, attr, &cq, NULL)`.
pub unsafe fn cq_open(
    domain: *mut fid_domain,
    attr: *mut fi_cq_attr,
    out: *mut *mut fid_cq,
) -> i32 {
    ((*(*domain).ops).cq_open.expect("fi_ops_domain.cq_open"))(
        domain,
        attr,
        out,
        std::ptr::null_mut(),
    )
}

/// `fi_mr_reg(domain, buf, len, access, 0, requested_key, 0, &mr, NULL)`.
pub unsafe fn mr_reg(
    domain: *mut fid_domain,
    buf: *const std::ffi::c_void,
    len: usize,
    access: u64,
    requested_key: u64,
    out: *mut *mut fid_mr,
) -> i32 {
    ((*(*domain).mr).reg.expect("fi_ops_mr.reg"))(
        &mut (*domain).fid,
        buf,
        len,
        access,
        0,
        requested_key,
        0,
        out,
        std::ptr::null_mut(),
    )
}

/// `fi_ep_bind(ep, bfid, flags)`, and `fi_mr_bind(mr, bfid, flags)`: a bind on `fid`'s ops.
pub unsafe fn bind(fid: *mut fid, bfid: *mut fid, flags: u64) -> i32 {
    ((*(*fid).ops).bind.expect("fi_ops.bind"))(fid, bfid, flags)
}

/// `fi_enable(ep)`, and `fi_mr_enable(mr)`: `FI_ENABLE` on `fid`'s control.
pub unsafe fn enable(fid: *mut fid) -> i32 {
    ((*(*fid).ops).control.expect("fi_ops.control"))(fid, FI_ENABLE as i32, std::ptr::null_mut())
}

/// `fi_getname(&ep->fid, addr, &len)`.
pub unsafe fn getname(ep: *mut fid_ep, addr: *mut std::ffi::c_void, len: *mut usize) -> i32 {
    ((*(*ep).cm).getname.expect("fi_ops_cm.getname"))(&mut (*ep).fid, addr, len)
}

/// `fi_av_insert(av, addr, count, fi_addr, 0, NULL)`.
pub unsafe fn av_insert(
    av: *mut fid_av,
    addr: *const std::ffi::c_void,
    count: usize,
    fi_addr: *mut fi_addr_t,
) -> i32 {
    ((*(*av).ops).insert.expect("fi_ops_av.insert"))(
        av,
        addr,
        count,
        fi_addr,
        0,
        std::ptr::null_mut(),
    )
}

/// `fi_writemsg(ep, msg, flags)`.
pub unsafe fn writemsg(ep: *mut fid_ep, msg: *const fi_msg_rma, flags: u64) -> isize {
    ((*(*ep).rma).writemsg.expect("fi_ops_rma.writemsg"))(ep, msg, flags)
}

/// `fi_recv(ep, NULL, 0, NULL, FI_ADDR_UNSPEC, context)`: an empty receive, which a write
/// with remote completion data consumes where the provider asks FI_RX_CQ_DATA.
pub unsafe fn recv_empty(ep: *mut fid_ep, context: *mut std::ffi::c_void) -> isize {
    ((*(*ep).msg).recv.expect("fi_ops_msg.recv"))(
        ep,
        std::ptr::null_mut(),
        0,
        std::ptr::null_mut(),
        ADDR_UNSPEC,
        context,
    )
}

/// `fi_cq_read(cq, buf, count)`.
pub unsafe fn cq_read(cq: *mut fid_cq, buf: *mut fi_cq_data_entry, count: usize) -> isize {
    ((*(*cq).ops).read.expect("fi_ops_cq.read"))(cq, buf.cast(), count)
}

/// `fi_cq_readerr(cq, buf, 0)`.
pub unsafe fn cq_readerr(cq: *mut fid_cq, buf: *mut fi_cq_err_entry) -> isize {
    ((*(*cq).ops).readerr.expect("fi_ops_cq.readerr"))(cq, buf, 0)
}

/// `fi_cq_strerror(cq, prov_errno, err_data, NULL, 0)`: the provider's words for its error.
pub unsafe fn cq_strerror(
    cq: *mut fid_cq,
    prov_errno: i32,
    err_data: *const std::ffi::c_void,
) -> String {
    let s = ((*(*cq).ops).strerror.expect("fi_ops_cq.strerror"))(
        cq,
        prov_errno,
        err_data,
        std::ptr::null_mut(),
        0,
    );
    cstr(s)
}

/// `fi_mr_key(mr)`.
pub unsafe fn mr_key(mr: *mut fid_mr) -> u64 {
    (*mr).key
}

/// `fi_mr_desc(mr)`.
pub unsafe fn mr_desc(mr: *mut fid_mr) -> *mut std::ffi::c_void {
    (*mr).mem_desc
}

/// A C string as Rust's, empty for NULL.
pub unsafe fn cstr(s: *const std::ffi::c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}

/// `fi_strerror(errno)` of a libfabric return code (negative errno), with its number.
pub fn strerror(rc: i64) -> String {
    let code = rc.unsigned_abs() as i32;
    // SAFETY: fi_strerror returns a static string for any code.
    let text = unsafe { cstr(fi_strerror(code)) };
    format!("{text} (-{code})")
}
