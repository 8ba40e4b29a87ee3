//! A crash guard for the command-line tool: a kernel that reads or writes outside its
//! buffers gets a SIGSEGV/SIGBUS from the host; instead of dying silently, `ptxr` prints
//! which launch crashed and exits non-zero.
//!
//! Only the binary installs the handler ([`install`]); code that launches kernels describes
//! the launch in progress with [`set_context`]. The handler only writes a preformatted buffer
//! and exits (async-signal-safe).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const CAP: usize = 1024;
static mut MSG: [u8; CAP] = [0; CAP];
static LEN: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Describes the launch in progress (shown if it crashes).
pub fn set_context(what: &str) {
    if !INSTALLED.load(Ordering::Relaxed) {
        return;
    }
    let text = format!("error: {what} crashed with a memory access fault (it reads or writes outside the memory it was given: check the launch's buffer sizes and scalar arguments)\n");
    let b = text.as_bytes();
    let n = b.len().min(CAP);
    LEN.store(0, Ordering::SeqCst);
    // SAFETY: only this function writes MSG, from the launching thread, while LEN is 0 the
    // handler prints nothing of it.
    unsafe {
        let dst = std::ptr::addr_of_mut!(MSG) as *mut u8;
        std::ptr::copy_nonoverlapping(b.as_ptr(), dst, n);
    }
    LEN.store(n, Ordering::SeqCst);
}

/// Set by the first faulting thread: the others wait for its `_exit` instead of printing
/// the message again (CTAs run on every core, several may fault at once).
static FIRED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_fault(_sig: libc::c_int) {
    if FIRED.swap(true, Ordering::SeqCst) {
        loop {
            // SAFETY: pause is async-signal-safe; the first thread ends the process.
            unsafe { libc::pause() };
        }
    }
    let n = LEN.load(Ordering::SeqCst);
    unsafe {
        if n > 0 {
            let src = std::ptr::addr_of!(MSG) as *const u8;
            libc::write(2, src as *const libc::c_void, n);
        } else {
            let m = b"error: memory access fault\n";
            libc::write(2, m.as_ptr() as *const libc::c_void, m.len());
        }
        libc::_exit(1);
    }
}

/// Installs the SIGSEGV/SIGBUS handler (on an alternate stack, so that a stack overflow is
/// caught too).
pub fn install() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    unsafe {
        let size = 64 * 1024;
        let stack = libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if stack != libc::MAP_FAILED {
            let ss = libc::stack_t { ss_sp: stack, ss_flags: 0, ss_size: size };
            libc::sigaltstack(&ss, std::ptr::null_mut());
        }
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_fault as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}
