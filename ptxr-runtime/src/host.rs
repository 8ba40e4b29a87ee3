//! Host services called by generated code through `HostFns`: printf, timers, assert.

use crate::abi::HostFns;
use std::io::Write;
use std::sync::Mutex;

/// Per-launch host state reachable from generated code (`CtaCtx::host`).
#[repr(C)]
pub struct HostState {
    /// The cancel word, first (generated code reads it at loop back edges): set by the
    /// launch's watchdog when it runs past its time limit.
    pub cancel: std::sync::atomic::AtomicU32,
    pub out: Mutex<Vec<u8>>,
    pub assert_msg: Mutex<Option<String>>,
    /// Extra words for an error (e.g. where the threads of a deadlocked CTA wait), and the
    /// CTA they are about ([`HostState::set_detail`]).
    pub detail: Mutex<Option<([u32; 3], String)>>,
    /// Device-side launches: parameter buffers handed out and not yet launched (by
    /// address), then the grids launched, which run when this grid has finished.
    pub buffers: Mutex<Vec<ChildLaunch>>,
    pub launched: Mutex<Vec<ChildLaunch>>,
    /// The allocations of the launch for code compiled for checking (`check::set_check`).
    pub check: Option<Vec<crate::check::Allocation>>,
    /// The device heap's blocks (`malloc` in kernels) while the checking mode runs: start,
    /// bytes.
    pub heap: Mutex<Vec<(u64, u64)>>,
    /// A launch of a kernel that cancels cluster launches (`abi::DK_CANCELLABLE`).
    pub clc: Option<Clc>,
}

impl HostState {
    /// Records `text` as the detail of an error of CTA `ctaid`: the first one a CTA records,
    /// and of the CTAs that fail at once (on different threads), that of the CTA first in the
    /// grid's order, the one whose error the launch reports (`launch::launch`).
    pub fn set_detail(&self, ctaid: [u32; 3], text: String) {
        let mut d = self.detail.lock().unwrap_or_else(|e| e.into_inner());
        let earlier = |a: [u32; 3], b: [u32; 3]| (a[2], a[1], a[0]) < (b[2], b[1], b[0]);
        if d.as_ref().map_or(true, |(c, _)| earlier(ctaid, *c)) {
            *d = Some((ctaid, text));
        }
    }

    /// The detail recorded for the launch's error, if any.
    pub fn detail(&self) -> Option<String> {
        self.detail.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|(_, t)| t.clone())
    }
}

/// The clusters of a launch that may cancel cluster launches: each is started exactly once,
/// by whoever takes its number from `next` first, the runtime (which then runs it) or a
/// `clusterlaunchcontrol.try_cancel` (whose CTA then does its work).
pub struct Clc {
    pub next: std::sync::atomic::AtomicU64,
    /// How many clusters (CTAs without clusters) the grid has.
    pub units: u64,
    /// The cluster shape ([1, 1, 1] without clusters) and the grid.
    pub cluster: [u32; 3],
    pub grid: [u32; 3],
}

impl Clc {
    /// Takes the next cluster not yet started: its number, if any is left.
    pub fn take(&self) -> Option<u64> {
        let q = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (q < self.units).then_some(q)
    }

    /// The ctaid of cluster `q`'s first CTA (clusters numbered x fastest in the grid of
    /// clusters).
    pub fn first_cta(&self, q: u64) -> [u32; 3] {
        let n = [0, 1, 2].map(|a| (self.grid[a] / self.cluster[a].max(1)).max(1) as u64);
        let pos = [q % n[0], (q / n[0]) % n[1], q / (n[0] * n[1])];
        [0, 1, 2].map(|a| (pos[a] * self.cluster[a] as u64) as u32)
    }
}

/// `HostFns::try_cancel`: the response of `clusterlaunchcontrol.try_cancel`, 16 bytes: the
/// cancelled cluster's first ctaid (x, y, z) and 1, or zeros when every cluster has started
/// (or the kernel is not one that cancels).
extern "C" fn try_cancel(cta: *mut crate::abi::CtaCtx, resp: *mut u8) {
    let mut words = [0u32; 4];
    // SAFETY: `cta` is the running CTA's context, whose `host` is the launch's HostState.
    let host = unsafe { (*cta).host as *const HostState };
    if let Some(clc) = unsafe { host.as_ref() }.and_then(|h| h.clc.as_ref()) {
        if let Some(q) = clc.take() {
            let c = clc.first_cta(q);
            words = [c[0], c[1], c[2], 1];
        }
    }
    for (k, w) in words.iter().enumerate() {
        // SAFETY: `resp` points to 16 writable bytes (generated code's temporary).
        unsafe { std::ptr::copy_nonoverlapping(w.to_le_bytes().as_ptr(), resp.add(4 * k), 4) };
    }
}

/// A grid launched from the device (`HostFns::launch_buffer` / `launch_device`).
pub struct ChildLaunch {
    pub kernel: *const crate::abi::DeviceKernel,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub smem: u32,
    pub params: Box<[u128]>,
}

// SAFETY: `kernel` points to a constant of a loaded module, which outlives the launch.
unsafe impl Send for ChildLaunch {}

pub static HOST_FNS: HostFns = HostFns { vprintf, globaltimer, assertfail, resolve: super::warp::resolve, launch_buffer, launch_device, cluster_sync: super::cluster::cluster_sync, check_access: super::check::check_access, try_cancel };

extern "C" fn launch_buffer(host: *mut u8, kernel: *const crate::abi::DeviceKernel, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, smem: u32) -> *mut u8 {
    if host.is_null() || kernel.is_null() {
        return std::ptr::null_mut();
    }
    let st = unsafe { &*(host as *const HostState) };
    let size = unsafe { (*kernel).param_size } as usize;
    let mut params = vec![0u128; size.div_ceil(16).max(1)].into_boxed_slice();
    let p = params.as_mut_ptr() as *mut u8;
    st.buffers.lock().unwrap_or_else(|e| e.into_inner()).push(ChildLaunch { kernel, grid: [gx, gy, gz], block: [bx, by, bz], smem, params });
    p
}

extern "C" fn launch_device(host: *mut u8, buf: *mut u8, _stream: u64) -> i32 {
    if host.is_null() {
        return 1;
    }
    let st = unsafe { &*(host as *const HostState) };
    let mut b = st.buffers.lock().unwrap_or_else(|e| e.into_inner());
    match b.iter().position(|c| c.params.as_ptr() as *mut u8 == buf) {
        Some(k) => {
            let c = b.swap_remove(k);
            drop(b);
            st.launched.lock().unwrap_or_else(|e| e.into_inner()).push(c);
            0
        }
        // cudaErrorInvalidValue: not a buffer of this launch.
        None => 1,
    }
}

unsafe fn cstr(p: *const u8) -> String {
    if p.is_null() {
        return String::from("(null)");
    }
    std::ffi::CStr::from_ptr(p as *const std::ffi::c_char).to_string_lossy().into_owned()
}

extern "C" fn globaltimer() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

extern "C" fn assertfail(host: *mut u8, msg: *const u8, file: *const u8, line: u32, func: *const u8) {
    let st = unsafe { &*(host as *const HostState) };
    let text = unsafe { format!("{}:{}: {}: Assertion `{}` failed.", cstr(file), line, cstr(func), cstr(msg)) };
    let mut g = st.assert_msg.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        *g = Some(text);
    }
}

/// CUDA's device printf: `fmt` is a C string; arguments are packed in `args`, each at its
/// natural alignment (integers and pointers 4 or 8 bytes, floats promoted to double).
extern "C" fn vprintf(host: *mut u8, fmt: *const u8, args: *const u8) -> i32 {
    let st = unsafe { &*(host as *const HostState) };
    let f = unsafe { cstr(fmt) };
    let mut out: Vec<u8> = Vec::new();
    let mut off = 0usize;
    let mut count = 0;
    let b = f.as_bytes();
    let mut k = 0;
    let read = |off: &mut usize, size: usize| -> u64 {
        *off = (*off + size - 1) / size * size;
        let mut v = [0u8; 8];
        if !args.is_null() {
            unsafe { std::ptr::copy_nonoverlapping(args.add(*off), v.as_mut_ptr(), size) };
        }
        *off += size;
        u64::from_le_bytes(v)
    };
    while k < b.len() {
        if b[k] != b'%' {
            out.push(b[k]);
            k += 1;
            continue;
        }
        k += 1;
        if k < b.len() && b[k] == b'%' {
            out.push(b'%');
            k += 1;
            continue;
        }
        // One conversion: flags, width and precision (a `*` takes an int argument) are kept
        // as written; the length modifier is normalized to what the argument's size needs.
        let mut spec = String::from("%");
        while k < b.len() && b"-+ #0".contains(&b[k]) {
            spec.push(b[k] as char);
            k += 1;
        }
        while k < b.len() && (b[k].is_ascii_digit() || b[k] == b'.' || b[k] == b'*') {
            if b[k] == b'*' {
                spec.push_str(&(read(&mut off, 4) as u32 as i32).to_string());
            } else {
                spec.push(b[k] as char);
            }
            k += 1;
        }
        let mut long = 0;
        let mut short = String::new();
        while k < b.len() && b"hlLqjzt".contains(&b[k]) {
            match b[k] {
                b'l' | b'q' | b'j' | b'z' | b't' => long += 1,
                b'h' => short.push('h'),
                _ => {}
            }
            k += 1;
        }
        if k >= b.len() {
            break;
        }
        let conv = b[k];
        k += 1;
        count += 1;
        let text = match conv {
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' => {
                if long > 0 {
                    c_format(&format!("{spec}ll{}", conv as char), Arg::I64(read(&mut off, 8) as i64))
                } else {
                    c_format(&format!("{spec}{short}{}", conv as char), Arg::I32(read(&mut off, 4) as u32 as i32))
                }
            }
            b'c' => c_format(&format!("{spec}c"), Arg::I32(read(&mut off, 4) as u32 as i32)),
            b'p' => c_format(&format!("{spec}p"), Arg::Ptr(read(&mut off, 8) as usize as *const libc::c_void)),
            b's' => {
                let p = read(&mut off, 8) as usize as *const libc::c_char;
                c_format(&format!("{spec}s"), Arg::Str(if p.is_null() { c"(null)".as_ptr() } else { p }))
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => c_format(&format!("{spec}{}", conv as char), Arg::F64(f64::from_bits(read(&mut off, 8)))),
            // `%n` writes nothing here; unknown conversions are printed as written.
            b'n' => Vec::new(),
            _ => format!("{spec}{}", conv as char).into_bytes(),
        };
        out.extend_from_slice(&text);
    }
    st.out.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&out);
    count
}

enum Arg {
    I32(i32),
    I64(i64),
    F64(f64),
    Ptr(*const libc::c_void),
    Str(*const libc::c_char),
}

/// One printf conversion through the C library's snprintf, so flags, widths, precisions,
/// `%a`, `%g`, inf and nan print exactly as C (and the GPU's printf) print them.
fn c_format(spec: &str, a: Arg) -> Vec<u8> {
    let Ok(fmt) = std::ffi::CString::new(spec) else { return spec.as_bytes().to_vec() };
    let mut buf = vec![0u8; 128];
    loop {
        let cap = buf.len();
        let p = buf.as_mut_ptr() as *mut libc::c_char;
        let n = unsafe {
            match a {
                Arg::I32(v) => libc::snprintf(p, cap, fmt.as_ptr(), v),
                Arg::I64(v) => libc::snprintf(p, cap, fmt.as_ptr(), v),
                Arg::F64(v) => libc::snprintf(p, cap, fmt.as_ptr(), v),
                Arg::Ptr(v) => libc::snprintf(p, cap, fmt.as_ptr(), v),
                Arg::Str(v) => libc::snprintf(p, cap, fmt.as_ptr(), v),
            }
        };
        if n < 0 {
            return Vec::new();
        }
        if (n as usize) < cap {
            buf.truncate(n as usize);
            return buf;
        }
        buf.resize(n as usize + 1, 0);
    }
}

impl HostState {
    pub fn new() -> HostState {
        HostState { cancel: std::sync::atomic::AtomicU32::new(0), out: Mutex::new(Vec::new()), assert_msg: Mutex::new(None), detail: Mutex::new(None), buffers: Mutex::new(Vec::new()), launched: Mutex::new(Vec::new()), check: crate::check::allocations(), heap: Mutex::new(Vec::new()), clc: None }
    }
    /// Writes printf output collected during the launch to stdout.
    pub fn flush(&self) {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if !g.is_empty() {
            let _ = std::io::stdout().write_all(&g);
            let _ = std::io::stdout().flush();
            g.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Clc;

    /// Clusters are numbered x fastest in the grid of clusters; each one's first CTA, worked
    /// by hand for a 4x3x2 grid in clusters of 2x1x1 (2x3x2 clusters) and without clusters.
    #[test]
    fn first_cta_of_each_cluster() {
        let clc = Clc { next: std::sync::atomic::AtomicU64::new(0), units: 12, cluster: [2, 1, 1], grid: [4, 3, 2] };
        let want = [[0, 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0], [0, 2, 0], [2, 2, 0], [0, 0, 1], [2, 0, 1], [0, 1, 1], [2, 1, 1], [0, 2, 1], [2, 2, 1]];
        for (q, w) in want.iter().enumerate() {
            assert_eq!(clc.first_cta(q as u64), *w, "cluster {q}");
        }
        let single = Clc { next: std::sync::atomic::AtomicU64::new(0), units: 24, cluster: [1, 1, 1], grid: [4, 3, 2] };
        assert_eq!(single.first_cta(5), [1, 1, 0]);
        assert_eq!(single.first_cta(23), [3, 2, 1]);
        // Each number is taken once, then none is left.
        let taken: Vec<Option<u64>> = (0..14).map(|_| clc.take()).collect();
        assert_eq!(taken[..12], (0..12).map(Some).collect::<Vec<_>>()[..]);
        assert_eq!(taken[12..], [None, None]);
    }
}
