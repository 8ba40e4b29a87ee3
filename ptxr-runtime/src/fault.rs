//! Memory faults of kernels as launch errors, for hosts that must survive them (the CUDA
//! driver library of `ptxr-cuda`: a GPU reports `CUDA_ERROR_ILLEGAL_ADDRESS` and the
//! process goes on).
//!
//! With [`enable`], each CTA function is called through a trampoline that records the
//! caller's callee-saved registers, stack pointer and return address; a SIGSEGV/SIGBUS
//! taken while a CTA function of this thread runs — in generated code, not in this
//! library's own code, which may hold locks — resumes at a stub that restores them and
//! returns [`FAULTED`] to the caller, which stops the CTA with `STATUS_MEMORY_FAULT` and
//! the faulting address. Faults elsewhere go to the handler that was installed before.
//! Generated code holds no locks and owns no heap memory across calls, so abandoning its
//! frames loses nothing but the CTA, whose launch then fails as on a GPU.
//!
//! x86-64 Linux only; elsewhere a fault ends the process as before.

use std::cell::Cell;

/// What the trampoline returns for a CTA function that faulted (CTA functions return 0 or a
/// small status).
pub const FAULTED: i32 = 0x7fff_fff0;

thread_local! {
    /// The register save area of the CTA call this thread is in, or null.
    static BUF: Cell<*mut u64> = const { Cell::new(std::ptr::null_mut()) };
    /// The address of the last fault taken by this thread's CTA call.
    static ADDR: Cell<u64> = const { Cell::new(0) };
}

static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The address of the fault that made the last guarded call of this thread return
/// [`FAULTED`].
pub fn last_fault_address() -> u64 {
    ADDR.with(|a| a.get())
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod imp {
    use super::*;
    use std::sync::Once;

    std::arch::global_asm!(
        ".globl ptxr_guarded_call",
        ".type ptxr_guarded_call,@function",
        "ptxr_guarded_call:",
        // rdi = f, rsi = ctx, rdx = save area (8 words). Save what the caller expects
        // preserved, the stack pointer it will see after our return, and the return address;
        // then tail-call f(ctx), which returns straight to our caller.
        "mov [rdx], rbx",
        "mov [rdx + 8], rbp",
        "mov [rdx + 16], r12",
        "mov [rdx + 24], r13",
        "mov [rdx + 32], r14",
        "mov [rdx + 40], r15",
        "lea rax, [rsp + 8]",
        "mov [rdx + 48], rax",
        "mov rax, [rsp]",
        "mov [rdx + 56], rax",
        "mov rax, rdi",
        "mov rdi, rsi",
        "jmp rax",
        ".globl ptxr_guarded_resume",
        ".type ptxr_guarded_resume,@function",
        "ptxr_guarded_resume:",
        // rdi = save area (set by the signal handler): return FAULTED to the caller.
        "mov rbx, [rdi]",
        "mov rbp, [rdi + 8]",
        "mov r12, [rdi + 16]",
        "mov r13, [rdi + 24]",
        "mov r14, [rdi + 32]",
        "mov r15, [rdi + 40]",
        "mov rsp, [rdi + 48]",
        "mov eax, 0x7ffffff0",
        "jmp qword ptr [rdi + 56]",
    );

    extern "C" {
        fn ptxr_guarded_call(f: crate::CtaFn, ctx: *mut crate::abi::CtaCtx, save: *mut u64) -> i32;
        fn ptxr_guarded_resume();
    }

    static mut OLD_SEGV: std::mem::MaybeUninit<libc::sigaction> = std::mem::MaybeUninit::uninit();
    static mut OLD_BUS: std::mem::MaybeUninit<libc::sigaction> = std::mem::MaybeUninit::uninit();
    static INSTALL: Once = Once::new();

    /// Whether `pc` lies in this library's own code (its mapping as `dladdr` finds it).
    unsafe fn in_this_library(pc: usize) -> bool {
        let mut a: libc::Dl_info = std::mem::zeroed();
        let mut b: libc::Dl_info = std::mem::zeroed();
        let here = in_this_library as *const () as usize;
        libc::dladdr(pc as *const libc::c_void, &mut a) != 0 && libc::dladdr(here as *const libc::c_void, &mut b) != 0 && a.dli_fbase == b.dli_fbase
    }

    extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
        unsafe {
            let buf = BUF.with(|b| b.get());
            let ucx = uc as *mut libc::ucontext_t;
            let pc = (*ucx).uc_mcontext.gregs[libc::REG_RIP as usize] as usize;
            if !buf.is_null() && !in_this_library(pc) {
                BUF.with(|b| b.set(std::ptr::null_mut()));
                ADDR.with(|a| a.set((*info).si_addr() as u64));
                (*ucx).uc_mcontext.gregs[libc::REG_RIP as usize] = ptxr_guarded_resume as *const () as usize as i64;
                (*ucx).uc_mcontext.gregs[libc::REG_RDI as usize] = buf as i64;
                return;
            }
            // Not ours: what was installed before decides.
            let old = if sig == libc::SIGSEGV { (*std::ptr::addr_of!(OLD_SEGV)).assume_init_ref() } else { (*std::ptr::addr_of!(OLD_BUS)).assume_init_ref() };
            if old.sa_sigaction == libc::SIG_DFL || old.sa_sigaction == libc::SIG_IGN {
                // Back to the default action; returning re-executes the faulting access.
                libc::signal(sig, libc::SIG_DFL);
            } else if old.sa_flags & libc::SA_SIGINFO != 0 {
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(old.sa_sigaction);
                f(sig, info, uc);
            } else {
                let f: extern "C" fn(libc::c_int) = std::mem::transmute(old.sa_sigaction);
                f(sig);
            }
        }
    }

    pub fn install() {
        INSTALL.call_once(|| unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fault as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGSEGV, &sa, (*std::ptr::addr_of_mut!(OLD_SEGV)).as_mut_ptr());
            libc::sigaction(libc::SIGBUS, &sa, (*std::ptr::addr_of_mut!(OLD_BUS)).as_mut_ptr());
        });
    }

    pub unsafe fn call(f: crate::CtaFn, ctx: *mut crate::abi::CtaCtx) -> i32 {
        let mut save = [0u64; 8];
        BUF.with(|b| b.set(save.as_mut_ptr()));
        let r = ptxr_guarded_call(f, ctx, save.as_mut_ptr());
        BUF.with(|b| b.set(std::ptr::null_mut()));
        r
    }
}

/// Turns memory faults of kernels into launch errors from now on (see the module comment).
/// Returns whether this platform supports it.
pub fn enable() -> bool {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        imp::install();
        ENABLED.store(true, std::sync::atomic::Ordering::Release);
        true
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    {
        false
    }
}

/// Calls a CTA function, guarded when [`enable`] was called.
///
/// # Safety
/// `f` and `ctx` as for a direct call of the CTA function.
pub unsafe fn call_cta(f: crate::CtaFn, ctx: *mut crate::abi::CtaCtx) -> i32 {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    if ENABLED.load(std::sync::atomic::Ordering::Acquire) {
        return imp::call(f, ctx);
    }
    f(ctx)
}
