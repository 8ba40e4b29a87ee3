//! Host services called by generated code through `HostFns`: printf, timers, assert.

use crate::codegen::abi::HostFns;
use std::io::Write;
use std::sync::Mutex;

/// Per-launch host state reachable from generated code (`CtaCtx::host`).
pub struct HostState {
    pub out: Mutex<Vec<u8>>,
    pub assert_msg: Mutex<Option<String>>,
    /// Extra words for an error (e.g. where the threads of a deadlocked CTA wait).
    pub detail: Mutex<Option<String>>,
}

pub static HOST_FNS: HostFns = HostFns { vprintf, globaltimer, assertfail, resolve: super::warp::resolve };

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
    let mut out = String::new();
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
            out.push(b[k] as char);
            k += 1;
            continue;
        }
        let start = k;
        k += 1;
        if k < b.len() && b[k] == b'%' {
            out.push('%');
            k += 1;
            continue;
        }
        while k < b.len() && b"-+ #0".contains(&b[k]) {
            k += 1;
        }
        while k < b.len() && (b[k].is_ascii_digit() || b[k] == b'.' || b[k] == b'*') {
            k += 1;
        }
        let mut long = 0;
        while k < b.len() && b"hlLqjzt".contains(&b[k]) {
            if b[k] == b'l' || b[k] == b'q' || b[k] == b'j' || b[k] == b'z' {
                long += 1;
            }
            k += 1;
        }
        if k >= b.len() {
            break;
        }
        let conv = b[k];
        k += 1;
        let spec = &f[start..k];
        count += 1;
        let (flags, width, prec) = parse_spec(&spec[1..spec.len() - 1]);
        let s = match conv {
            b'd' | b'i' => {
                let v = if long > 0 { read(&mut off, 8) as i64 } else { read(&mut off, 4) as u32 as i32 as i64 };
                v.to_string()
            }
            b'u' => (if long > 0 { read(&mut off, 8) } else { read(&mut off, 4) as u32 as u64 }).to_string(),
            b'x' | b'X' | b'o' => {
                let v = if long > 0 { read(&mut off, 8) } else { read(&mut off, 4) as u32 as u64 };
                let s = match conv {
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if flags.contains('#') && v != 0 {
                    format!("{}{}", if conv == b'o' { "0" } else if conv == b'x' { "0x" } else { "0X" }, s)
                } else {
                    s
                }
            }
            b'c' => ((read(&mut off, 4) as u8) as char).to_string(),
            b'p' => format!("0x{:x}", read(&mut off, 8)),
            b's' => unsafe { cstr(read(&mut off, 8) as usize as *const u8) },
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(read(&mut off, 8));
                let p = prec.unwrap_or(6);
                match conv {
                    b'f' | b'F' => format!("{v:.p$}"),
                    b'e' | b'E' => c_exp(v, p, conv == b'E'),
                    _ => c_general(v, p),
                }
            }
            _ => spec.to_string(),
        };
        let s = if let Some(w) = width { pad(&s, w, flags.contains('-'), flags.contains('0') && conv != b's') } else { s };
        out.push_str(&s);
    }
    st.out.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(out.as_bytes());
    count
}

fn parse_spec(s: &str) -> (String, Option<usize>, Option<usize>) {
    let flags: String = s.chars().take_while(|c| "-+ #0".contains(*c)).collect();
    let rest = &s[flags.len()..];
    let rest: String = rest.chars().filter(|c| c.is_ascii_digit() || *c == '.').collect();
    let mut parts = rest.splitn(2, '.');
    let width = parts.next().and_then(|w| w.parse().ok());
    let prec = parts.next().map(|p| p.parse().unwrap_or(0));
    (flags, width, prec)
}

fn pad(s: &str, w: usize, left: bool, zero: bool) -> String {
    if s.len() >= w {
        return s.to_string();
    }
    let n = w - s.len();
    if left {
        format!("{s}{}", " ".repeat(n))
    } else if zero {
        let (sign, digits) = if s.starts_with('-') { ("-", &s[1..]) } else { ("", s) };
        format!("{sign}{}{digits}", "0".repeat(n))
    } else {
        format!("{}{s}", " ".repeat(n))
    }
}

fn c_exp(v: f64, p: usize, upper: bool) -> String {
    let s = format!("{v:.p$e}");
    // Rust prints `1.5e3`; C prints `1.5e+03`.
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let ev: i32 = e.parse().unwrap_or(0);
    let r = format!("{m}e{}{:02}", if ev < 0 { '-' } else { '+' }, ev.abs());
    if upper {
        r.to_uppercase()
    } else {
        r
    }
}

fn c_general(v: f64, p: usize) -> String {
    let p = p.max(1);
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let exp = v.abs().log10().floor() as i32;
    if exp < -4 || exp >= p as i32 {
        let s = c_exp(v, p - 1, false);
        let (m, e) = s.split_once('e').unwrap();
        let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
        format!("{m}e{e}")
    } else {
        let dec = (p as i32 - 1 - exp).max(0) as usize;
        let s = format!("{v:.dec$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

impl HostState {
    pub fn new() -> HostState {
        HostState { out: Mutex::new(Vec::new()), assert_msg: Mutex::new(None), detail: Mutex::new(None) }
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
