//! Streams and events: `cuStream*`, `cuEvent*`, `cuLaunchHostFunc`.
//!
//! Every operation runs when it is issued, in issue order, and has completed when its call
//! returns. That is one of the executions CUDA's stream rules allow (work of one stream in
//! order; work of different streams in any order unless events order it), so programs that
//! follow the rules get the results they get on a GPU; programs that race between streams
//! get one of their possible results. Events record the time at which their turn comes.

use crate::*;
use std::sync::Mutex;
use std::time::Instant;

pub struct Stream {
    pub flags: u32,
    pub priority: c_int,
}

pub struct Event {
    pub flags: u32,
    pub at: Mutex<Option<Instant>>,
}

pub(crate) static STREAMS: Handles<Stream> = Handles::new();
pub(crate) static EVENTS: Handles<Event> = Handles::new();

/// `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`, the special handles, and NULL.
fn special(s: *mut c_void) -> bool {
    (s as usize) <= 2
}

/// A stream argument is NULL, a special handle or a live stream.
pub(crate) fn check(s: *mut c_void) -> Result<(), CUresult> {
    if special(s) {
        return Ok(());
    }
    STREAMS.get(s).map(|_| ())
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(s: *mut *mut c_void, flags: u32) -> CUresult {
    cuStreamCreateWithPriority(s, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreateWithPriority(s: *mut *mut c_void, flags: u32, priority: c_int) -> CUresult {
    api_ctx(|| {
        if s.is_null() || flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(s, STREAMS.add(Stream { flags, priority }))
    })
}

#[no_mangle]
pub extern "C" fn cuStreamDestroy_v2(s: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        if special(s) {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        STREAMS.remove(s).map(|_| ())
    })
}

#[no_mangle]
pub extern "C" fn cuStreamSynchronize(s: *mut c_void) -> CUresult {
    api_ctx(|| check(s))
}

#[no_mangle]
pub extern "C" fn cuStreamQuery(s: *mut c_void) -> CUresult {
    api_ctx(|| check(s))
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamGetFlags(s: *mut c_void, flags: *mut u32) -> CUresult {
    api_ctx(|| {
        check(s)?;
        put(flags, if special(s) { 0 } else { STREAMS.get(s)?.flags })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamGetPriority(s: *mut c_void, p: *mut c_int) -> CUresult {
    api_ctx(|| {
        check(s)?;
        put(p, if special(s) { 0 } else { STREAMS.get(s)?.priority })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamGetCtx(s: *mut c_void, ctx: *mut *mut c_void) -> CUresult {
    api_ctx(|| {
        check(s)?;
        put(ctx, device::current_handle())
    })
}

/// The event has completed (everything before it has): nothing to wait for.
#[no_mangle]
pub extern "C" fn cuStreamWaitEvent(s: *mut c_void, e: *mut c_void, _flags: u32) -> CUresult {
    api_ctx(|| {
        check(s)?;
        EVENTS.get(e).map(|_| ())
    })
}

pub type HostFn = unsafe extern "C" fn(*mut c_void);
pub type StreamCallback = unsafe extern "C" fn(*mut c_void, CUresult, *mut c_void);

#[no_mangle]
pub unsafe extern "C" fn cuLaunchHostFunc(s: *mut c_void, f: Option<HostFn>, data: *mut c_void) -> CUresult {
    api_ctx(|| {
        check(s)?;
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        f(data);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamAddCallback(s: *mut c_void, f: Option<StreamCallback>, data: *mut c_void, flags: u32) -> CUresult {
    api_ctx(|| {
        check(s)?;
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        f(s, CUDA_SUCCESS, data);
        Ok(())
    })
}

// ------------------------------------------------------------------ events

/// `CU_EVENT_DISABLE_TIMING`.
const DISABLE_TIMING: u32 = 2;

#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(e: *mut *mut c_void, flags: u32) -> CUresult {
    api_ctx(|| {
        if e.is_null() || flags & !0xf != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(e, EVENTS.add(Event { flags, at: Mutex::new(None) }))
    })
}

#[no_mangle]
pub extern "C" fn cuEventDestroy_v2(e: *mut c_void) -> CUresult {
    api(|| {
        initialized()?;
        EVENTS.remove(e).map(|_| ())
    })
}

#[no_mangle]
pub extern "C" fn cuEventRecord(e: *mut c_void, s: *mut c_void) -> CUresult {
    api_ctx(|| {
        check(s)?;
        let ev = EVENTS.get(e)?;
        *ev.at.lock().unwrap_or_else(|x| x.into_inner()) = Some(Instant::now());
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn cuEventRecordWithFlags(e: *mut c_void, s: *mut c_void, _flags: u32) -> CUresult {
    cuEventRecord(e, s)
}

#[no_mangle]
pub extern "C" fn cuEventSynchronize(e: *mut c_void) -> CUresult {
    api_ctx(|| EVENTS.get(e).map(|_| ()))
}

#[no_mangle]
pub extern "C" fn cuEventQuery(e: *mut c_void) -> CUresult {
    api_ctx(|| EVENTS.get(e).map(|_| ()))
}

/// Milliseconds between two recorded events (`CUDA_ERROR_INVALID_HANDLE` if either was
/// created without timing or never recorded, as CUDA documents).
#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(ms: *mut f32, start: *mut c_void, end: *mut c_void) -> CUresult {
    api_ctx(|| {
        let (a, b) = (EVENTS.get(start)?, EVENTS.get(end)?);
        if (a.flags | b.flags) & DISABLE_TIMING != 0 {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let ta = (*a.at.lock().unwrap_or_else(|x| x.into_inner())).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let tb = (*b.at.lock().unwrap_or_else(|x| x.into_inner())).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let d = if tb >= ta { (tb - ta).as_secs_f64() } else { -(ta - tb).as_secs_f64() };
        put(ms, (d * 1e3) as f32)
    })
}

// ------------------------------------------------------------------ profiler

/// Profiler control: there is no profiler to start or stop; the calls succeed so that
/// programs that bracket a region with them run.
#[no_mangle]
pub extern "C" fn cuProfilerStart() -> CUresult {
    api(initialized)
}

#[no_mangle]
pub extern "C" fn cuProfilerStop() -> CUresult {
    api(initialized)
}
