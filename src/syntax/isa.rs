//! The instruction table of PTX ISA 6.4, chapter 9.7 (sections 9.7.1 to 9.7.17), and the
//! matcher that checks an instruction's modifier list against it.
//!
//! This module is self-contained: it uses nothing from the rest of the crate, so it can be
//! tested on its own.
//!
//! # The table
//!
//! Every opcode has one or more [`InstrSpec`]s, one per alternative syntax line of its "Syntax"
//! block (integer `add`, float `add`, half `add`, `add.cc`, ...).  A spec is a list of
//! [`ModGroup`]s in the order the spec writes them; a group is a set of alternative modifiers
//! (written without the leading dot) of which at most one may be used, and, when the group is
//! `required`, exactly one must be.  Modifiers such as `.sync` that a form always carries are
//! required groups with a single option.  Operand counts are as written: a vector operand
//! `{a,b}` counts as one, `d|p` counts as one, a bracketed address `[a, {b}]` counts as one, and
//! each parenthesised argument list of `call` counts as one.
//!
//! Sub-opcodes that PTX writes as a modifier are modifiers here: `add.cc` is opcode `add` with
//! modifier `cc`, `ld.global.nc` is `ld` with `global` and `nc`, `shfl.sync` is `shfl` with
//! `sync`, `bar.warp.sync` is `bar` with `warp` and `sync`, `brx.idx` is `brx` with `idx`, and
//! `wmma.load` / `wmma.store` / `wmma.mma` are `wmma` specs whose first group is required and has
//! the single option `load` / `store` / `mma`.
//!
//! # The matching rule
//!
//! Compilers emit modifiers in varying orders (`ld.volatile.global.u32` and
//! `ld.global.volatile.u32`, `atom.global.add.u32` and `atom.add.global.u32`), so matching is
//! order-insensitive across groups.  For one spec:
//!
//! 1. Each modifier, taken in the order written, is assigned to the **first group, in group
//!    order, that is not yet used and whose options contain it**.  A modifier that finds no such
//!    group is *unassigned*.  Groups that legitimately repeat a set of options (the destination
//!    and source types of `cvt`, the four types of `mma`, the three types of the video
//!    instructions) are separate groups, so a repeated modifier fills the next one; a modifier
//!    repeated more often than there are groups for it (`add.u32.u32`) is unassigned.
//! 2. The spec matches when every modifier was assigned, every required group received one, and
//!    the operand count lies in `min_operands..=max_operands`.
//!
//! [`check`] tries the specs of the opcode in table order and returns the first that matches;
//! this path allocates nothing.  If none matches:
//!
//! * if some spec matched the modifiers but not the operand count, the error is
//!   [`ModError::OperandCount`], listing every count those specs accept;
//! * otherwise the error comes from the spec that came closest, i.e. with the most modifiers
//!   assigned (ties: fewest unassigned, then fewest required groups missing, then the one whose
//!   first unassigned modifier comes latest in the written order, then table order):
//!   [`ModError::Unexpected`] naming its first unassigned modifier, or else
//!   [`ModError::Missing`] describing its first missing required group.
//!
//! Because matching ignores order, the checker says whether a modifier list is valid, not which
//! modifier plays which role: callers that need roles (which of two types of `cvt` is the
//! destination) read them in written order, or use [`check_assigned`], which also returns the
//! group each modifier was assigned to.
//!
//! # Beyond PTX 6.4
//!
//! Where compilers emitting PTX 7.x/8.x commonly use a simple superset of a 6.4 form, the table
//! accepts it too; such entries are marked `ext` in comments and cite the 6.4 section they extend
//! (or, for `redux.sync` and `tanh`, the 6.4 chapter they belong to): the cache eviction hints of
//! `ld`/`st` (`.L1::no_allocate`, `.L2::128B`, `.L2::cache_hint`, ...), `.shared::cta`/`.cluster`
//! state spaces and `.cluster` scope, `.bf16`/`.bf16x2`/`.tf32` types, `cvt` `.relu`/`.rna` and the
//! packing `cvt.rn.f16x2.f32`, half-precision `abs`/`min`/`max`/`ex2`, `min`/`max` `.NaN`,
//! `fma.rn.relu`, `tanh.approx`, `redux.sync`, the `mma` shapes of sm_80, and `bf16`/`tf32`/`f64`
//! `wmma`.
//!
//! # Where the 6.4 text disagrees with itself
//!
//! * Read as intended: `le` is missing from the CmpOp list of 9.7.5.1 (present in 9.7.5.2);
//!   `.ald` in the `tex` geometries is `.a1d`; 9.7.16.1's syntax spells `vavg2` where its title
//!   and 9.7.16.3 say `vavrg2` (only `vavrg2`/`vavrg4` are accepted); `st.relaxed.scope{.ss}{.vec}.scope`
//!   writes the scope twice (one is accepted); half `set` accepts `.f16` as source type, as its
//!   example does.
//! * Made optional because the examples omit them: the rounding of half `fma` (`fma.f16`), the
//!   `.clamp` mode of `suld`/`sust`/`sured`, and `.aligned` in `wmma`.
//! * Example lines that are rejected, following the syntax blocks: `bfe.b32` (types are
//!   .u32/.s32/.u64/.s64), `rcp.ftz.f64` (it is `rcp.approx.ftz.f64`), `div.f32` without
//!   `.approx`/`.full`/rounding (PTX 1.0-1.3 only), `fence.sc;` without a scope,
//!   `red...acquire` (red's .sem is .relaxed/.release), and `vset4...max` (only `.add`).

use std::fmt;

/// One alternative syntax of an instruction (an instruction may have several specs, e.g. integer
/// add, float add, half add).
#[derive(Debug)]
pub struct InstrSpec {
    /// The opcode, e.g. "add", "shfl", "bar", "barrier", "wmma", "cvta", "tex", "vadd2".
    pub opcode: &'static str,
    /// Modifier groups in spec order.
    pub groups: &'static [ModGroup],
    /// Operand count as written (a vector operand `{a,b}` counts as one; `d|p` counts as one;
    /// call's argument lists count as one each).
    pub min_operands: u8,
    pub max_operands: u8,
    /// The section of the PTX ISA 6.4 manual, e.g. "9.7.1.1".
    pub section: &'static str,
}

/// A set of alternative modifiers, at most one of which may be used (exactly one if `required`).
#[derive(Debug)]
pub struct ModGroup {
    pub required: bool,
    /// Options without the leading dot, e.g. `&["rn", "rz", "rm", "rp"]`.
    pub options: &'static [&'static str],
}

/// Why an instruction's modifiers or operand count do not fit any of its specs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModError {
    /// The opcode is not a PTX instruction.
    UnknownOpcode,
    /// `modifier` cannot be used (here) with `opcode`.
    Unexpected { modifier: String, opcode: String },
    /// A required modifier is missing; `what` describes it, e.g.
    /// "type of `add` (.u16, .u32, .u64, .s16, .s32, .s64)".
    Missing { what: String },
    /// The modifiers fit but the operand count does not; `expected` is e.g. "3" or "3 or 4".
    OperandCount { expected: String, found: usize },
}

impl fmt::Display for ModError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModError::UnknownOpcode => write!(f, "unknown instruction"),
            ModError::Unexpected { modifier, opcode } => {
                let base = opcode.split('.').next().unwrap_or(opcode);
                let known = specs(base).iter().any(|s| s.groups.iter().any(|g| g.options.contains(&modifier.as_str())));
                if known {
                    write!(f, "`.{modifier}` cannot be used in this form of `{opcode}` (it is repeated or conflicts with another modifier)")
                } else {
                    write!(f, "`.{modifier}` is not a valid modifier of `{opcode}`")
                }
            }
            ModError::Missing { what } => write!(f, "missing {what}"),
            ModError::OperandCount { expected, found } => {
                let s = if expected == "1" { "" } else { "s" };
                write!(f, "wrong number of operands: expected {expected} operand{s}, found {found}")
            }
        }
    }
}

impl std::error::Error for ModError {}

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

/// All specs of `opcode` (empty if unknown).
pub fn specs(opcode: &str) -> &'static [InstrSpec] {
    match opcode {
        // 9.7.1 integer, 9.7.2 extended precision, 9.7.3 float, 9.7.4 half
        "add" => ADD,
        "sub" => SUB,
        "mul" => MUL,
        "mad" => MAD,
        "mul24" => MUL24,
        "mad24" => MAD24,
        "sad" => SAD,
        "div" => DIV,
        "rem" => REM,
        "abs" => ABS,
        "neg" => NEG,
        "min" => MIN,
        "max" => MAX,
        "popc" => POPC,
        "clz" => CLZ,
        "bfind" => BFIND,
        "bmsk" => BMSK,
        "fns" => FNS,
        "brev" => BREV,
        "bfe" => BFE,
        "bfi" => BFI,
        "dp4a" => DP4A,
        "dp2a" => DP2A,
        "addc" => ADDC,
        "subc" => SUBC,
        "madc" => MADC,
        "testp" => TESTP,
        "copysign" => COPYSIGN,
        "fma" => FMA,
        "rcp" => RCP,
        "sqrt" => SQRT,
        "rsqrt" => RSQRT,
        "sin" => SIN,
        "cos" => COS,
        "lg2" => LG2,
        "ex2" => EX2,
        "tanh" => TANH,
        // 9.7.5, 9.7.6 comparison and selection
        "set" => SET,
        "setp" => SETP,
        "selp" => SELP,
        "slct" => SLCT,
        // 9.7.7 logic and shift
        "and" => AND,
        "or" => OR,
        "xor" => XOR,
        "not" => NOT,
        "cnot" => CNOT,
        "lop3" => LOP3,
        "shf" => SHF,
        "shl" => SHL,
        "shr" => SHR,
        // 9.7.8 data movement and conversion
        "mov" => MOV,
        "shfl" => SHFL,
        "prmt" => PRMT,
        "ld" => LD,
        "ldu" => LDU,
        "st" => ST,
        "prefetch" => PREFETCH,
        "prefetchu" => PREFETCHU,
        "isspacep" => ISSPACEP,
        "cvta" => CVTA,
        "cvt" => CVT,
        // 9.7.9 texture, 9.7.10 surface
        "tex" => TEX,
        "tld4" => TLD4,
        "txq" => TXQ,
        "istypep" => ISTYPEP,
        "suld" => SULD,
        "sust" => SUST,
        "sured" => SURED,
        "suq" => SUQ,
        // 9.7.11 control flow
        "bra" => BRA,
        "brx" => BRX,
        "call" => CALL,
        "ret" => RET,
        "exit" => EXIT,
        // 9.7.12 parallel synchronization and communication
        "bar" => BAR,
        "barrier" => BARRIER,
        "membar" => MEMBAR,
        "fence" => FENCE,
        "atom" => ATOM,
        "red" => RED,
        "vote" => VOTE,
        "match" => MATCH,
        "activemask" => ACTIVEMASK,
        "redux" => REDUX,
        // 9.7.13 matrix multiply-accumulate
        "wmma" => WMMA,
        "mma" => MMA,
        "ldmatrix" => LDMATRIX,
        "stmatrix" => STMATRIX,
        "wgmma" => WGMMA,
        "tensormap" => TENSORMAP,
        "cp" => CP,
        // 9.7.15 scalar video
        "vadd" => VADD,
        "vsub" => VSUB,
        "vabsdiff" => VABSDIFF,
        "vmin" => VMIN,
        "vmax" => VMAX,
        "vshl" => VSHL,
        "vshr" => VSHR,
        "vmad" => VMAD,
        "vset" => VSET,
        // 9.7.16 SIMD video
        "vadd2" => VADD2,
        "vsub2" => VSUB2,
        "vavrg2" => VAVRG2,
        "vabsdiff2" => VABSDIFF2,
        "vmin2" => VMIN2,
        "vmax2" => VMAX2,
        "vset2" => VSET2,
        "vadd4" => VADD4,
        "vsub4" => VSUB4,
        "vavrg4" => VAVRG4,
        "vabsdiff4" => VABSDIFF4,
        "vmin4" => VMIN4,
        "vmax4" => VMAX4,
        "vset4" => VSET4,
        // 9.7.17 miscellaneous
        "brkpt" => BRKPT,
        "nanosleep" => NANOSLEEP,
        "pmevent" => PMEVENT,
        "trap" => TRAP,
        "createpolicy" => CREATEPOLICY,
        "mbarrier" => MBARRIER,
        "griddepcontrol" => GRIDDEPCONTROL,
        "setmaxnreg" => SETMAXNREG,
        "elect" => ELECT,
        "mapa" => MAPA,
        "tcgen05" => TCGEN05,
        "getctarank" => GETCTARANK,
        "clusterlaunchcontrol" => CLUSTERLAUNCHCONTROL,
        _ => &[],
    }
}

/// Every opcode the table knows, in table order.
pub const OPCODES: &[&str] = &[
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max", "popc", "clz",
    "bfind", "fns", "brev", "bfe", "bfi", "dp4a", "dp2a", "addc", "subc", "madc", "testp", "copysign", "fma", "rcp",
    "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "set", "setp", "selp", "slct", "and", "or", "xor", "not",
    "cnot", "lop3", "shf", "shl", "shr", "mov", "shfl", "prmt", "ld", "ldu", "st", "prefetch", "prefetchu",
    "isspacep", "cvta", "cvt", "tex", "tld4", "txq", "istypep", "suld", "sust", "sured", "suq", "bra", "brx", "call",
    "ret", "exit", "bar", "barrier", "membar", "fence", "atom", "red", "vote", "match", "activemask", "redux", "wmma",
    "mma", "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset", "vadd2", "vsub2", "vavrg2",
    "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4",
    "brkpt", "nanosleep", "pmevent", "trap", "ldmatrix", "stmatrix", "wgmma", "tensormap", "cp", "createpolicy", "mbarrier",
    "griddepcontrol", "setmaxnreg", "elect", "bmsk", "mapa", "getctarank", "tcgen05", "clusterlaunchcontrol",
];

/// Whether `opcode` is a PTX instruction.
pub fn is_known_opcode(opcode: &str) -> bool {
    !specs(opcode).is_empty()
}

/// At most this many groups per spec (the group-use set is a `u16` bitmask).
pub const MAX_GROUPS: usize = 16;

/// The outcome of assigning a modifier list to one spec's groups.
struct Assign {
    /// Bit i set: group i received a modifier.
    used: u16,
    assigned: usize,
    unassigned: usize,
    first_unassigned: Option<usize>,
}

const NONE: u8 = u8::MAX;

#[inline(always)]
fn same(a: &str, b: &str) -> bool {
    // Length and first byte first: most candidate options differ there.
    a.len() == b.len() && a.as_bytes().first() == b.as_bytes().first() && a == b
}

/// The first group, in group order, not in `used` whose options contain `m`.
#[inline(always)]
fn find_group(spec: &InstrSpec, used: u16, m: &str) -> Option<usize> {
    for (gi, g) in spec.groups.iter().enumerate() {
        if used & (1 << gi) == 0 && g.options.iter().any(|o| same(o, m)) {
            return Some(gi);
        }
    }
    None
}

/// Fast path: the assignment of `modifiers` to `spec`'s groups if every modifier is assigned and
/// every required group filled; stops at the first failure.
#[inline]
fn try_match(spec: &InstrSpec, modifiers: &[&str]) -> Option<[u8; MAX_GROUPS]> {
    if modifiers.len() > spec.groups.len() {
        return None;
    }
    let mut used = 0u16;
    let mut group_of = [NONE; MAX_GROUPS];
    for (mi, m) in modifiers.iter().enumerate() {
        let gi = find_group(spec, used, m)?;
        used |= 1 << gi;
        group_of[mi] = gi as u8;
    }
    if missing_mask(spec, used) != 0 {
        return None;
    }
    Some(group_of)
}

/// Slow path, for diagnostics: the full assignment of `modifiers` to `spec`'s groups.
fn assign(spec: &InstrSpec, modifiers: &[&str]) -> Assign {
    let mut a = Assign { used: 0, assigned: 0, unassigned: 0, first_unassigned: None };
    for (mi, m) in modifiers.iter().enumerate() {
        match find_group(spec, a.used, m) {
            Some(gi) => {
                a.used |= 1 << gi;
                a.assigned += 1;
            }
            None => {
                a.unassigned += 1;
                if a.first_unassigned.is_none() {
                    a.first_unassigned = Some(mi);
                }
            }
        }
    }
    a
}

#[inline]
fn missing_mask(spec: &InstrSpec, used: u16) -> u16 {
    let mut m = 0u16;
    for (gi, g) in spec.groups.iter().enumerate() {
        if g.required && used & (1 << gi) == 0 {
            m |= 1 << gi;
        }
    }
    m
}

/// Checks `modifiers` (without dots, in written order) and the operand count of one instruction
/// against the table; returns the first spec that matches (see the module documentation).
pub fn check(opcode: &str, modifiers: &[&str], operand_count: usize) -> Result<&'static InstrSpec, ModError> {
    check_assigned(opcode, modifiers, operand_count).map(|(s, _)| s)
}

/// Like [`check`], and also returns, for each modifier, the index (into `spec.groups`) of the
/// group it was assigned to; entries past `modifiers.len()` are `u8::MAX`.
pub fn check_assigned(
    opcode: &str,
    modifiers: &[&str],
    operand_count: usize,
) -> Result<(&'static InstrSpec, [u8; MAX_GROUPS]), ModError> {
    let list = specs(opcode);
    if list.is_empty() {
        return Err(ModError::UnknownOpcode);
    }
    // Bit n: some spec whose modifiers matched accepts n operands.
    let mut counts_ok: u64 = 0;
    for spec in list {
        if let Some(group_of) = try_match(spec, modifiers) {
            if (spec.min_operands as usize..=spec.max_operands as usize).contains(&operand_count) {
                return Ok((spec, group_of));
            }
            for n in spec.min_operands..=spec.max_operands.min(63) {
                counts_ok |= 1 << n;
            }
        }
    }
    if counts_ok != 0 {
        return Err(ModError::OperandCount { expected: describe_counts(counts_ok), found: operand_count });
    }
    Err(closest_error(list, modifiers))
}

/// The error of the spec that came closest: most modifiers assigned, then fewest unassigned,
/// then fewest required groups missing, then the first unassigned modifier latest in the
/// written order, then the earliest spec.
#[cold]
fn closest_error(list: &'static [InstrSpec], modifiers: &[&str]) -> ModError {
    let key = |a: &Assign, spec: &InstrSpec| {
        let missing = missing_mask(spec, a.used).count_ones();
        (a.assigned, usize::MAX - a.unassigned, u32::MAX - missing, a.first_unassigned.unwrap_or(usize::MAX))
    };
    let mut best = 0;
    let mut best_key = key(&assign(&list[0], modifiers), &list[0]);
    for (si, spec) in list.iter().enumerate().skip(1) {
        let k = key(&assign(spec, modifiers), spec);
        if k > best_key {
            best = si;
            best_key = k;
        }
    }
    let spec = &list[best];
    let a = assign(spec, modifiers);
    if let Some(mi) = a.first_unassigned {
        return ModError::Unexpected { modifier: modifiers[mi].to_string(), opcode: display_name(spec) };
    }
    let missing = missing_mask(spec, a.used);
    let gi = missing.trailing_zeros() as usize;
    ModError::Missing { what: describe_group(spec, gi) }
}

fn describe_counts(mask: u64) -> String {
    let ns: Vec<u32> = (0..64).filter(|n| mask & (1u64 << n) != 0).collect();
    match ns.len() {
        0 => "none".to_string(),
        1 => ns[0].to_string(),
        n => {
            let contiguous = ns.windows(2).all(|w| w[1] == w[0] + 1);
            if contiguous && n > 2 {
                format!("{} to {}", ns[0], ns[n - 1])
            } else {
                let head: Vec<String> = ns[..n - 1].iter().map(|x| x.to_string()).collect();
                format!("{} or {}", head.join(", "), ns[n - 1])
            }
        }
    }
}

/// "wmma.load" for the wmma sub-opcodes, the plain opcode otherwise.
fn display_name(spec: &InstrSpec) -> String {
    if spec.opcode == "wmma" {
        if let Some(g) = spec.groups.first() {
            if g.required && g.options.len() == 1 {
                return format!("wmma.{}", g.options[0]);
            }
        }
    }
    spec.opcode.to_string()
}

const TYPE_NAMES: &[&str] = &[
    "pred", "b1", "b8", "b16", "b32", "b64", "b128", "u4", "u8", "u16", "u32", "u64", "s4", "s8", "s16", "s32",
    "s64", "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "texref", "samplerref", "surfref",
];

fn is_type_group(g: &ModGroup) -> bool {
    g.options.iter().all(|o| TYPE_NAMES.contains(o))
}

fn all_in(g: &ModGroup, set: &[&str]) -> bool {
    g.options.iter().all(|o| set.contains(o))
}

/// The role of the `k`-th of `n` type groups of `opcode`.
fn type_role(opcode: &str, n: usize, k: usize) -> String {
    let roles: &[&str] = match (opcode, n) {
        (_, 1) => &["type"],
        ("cvt" | "set" | "slct", 2) => &["destination type", "source type"],
        ("tex" | "tld4", 2) => &["destination type", "coordinate type"],
        ("wmma", 2) => &["type of d", "type of c"],
        ("wmma" | "mma", 4) => &["type of d", "type of a", "type of b", "type of c"],
        ("dp4a" | "dp2a" | "vset" | "vset2" | "vset4", 2) => &["type of a", "type of b"],
        (_, 3) if opcode.starts_with('v') => &["destination type", "type of a", "type of b"],
        _ => &[],
    };
    match roles.get(k) {
        Some(r) => r.to_string(),
        None => {
            const ORD: [&str; 6] = ["first", "second", "third", "fourth", "fifth", "sixth"];
            format!("{} type", ORD.get(k).copied().unwrap_or("next"))
        }
    }
}

/// `m<digits>n<digits>k<digits>`, a matrix shape.
fn is_shape(o: &str) -> bool {
    let mut rest = o;
    for letter in ['m', 'n', 'k'] {
        rest = match rest.strip_prefix(letter) {
            Some(r) => r,
            None => return false,
        };
        let digits = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
    }
    rest.is_empty()
}

/// Describes group `gi` of `spec` for a [`ModError::Missing`].
fn describe_group(spec: &InstrSpec, gi: usize) -> String {
    let g = &spec.groups[gi];
    let name = display_name(spec);
    let kind: String = if is_type_group(g) {
        let n = spec.groups.iter().filter(|g| is_type_group(g)).count();
        let k = spec.groups[..gi].iter().filter(|g| is_type_group(g)).count();
        type_role(spec.opcode, n, k)
    } else if all_in(g, &["rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"]) {
        "rounding modifier".into()
    } else if all_in(g, &["approx", "full", "rn", "rz", "rm", "rp"]) {
        "precision modifier".into()
    } else if all_in(g, &["global", "shared", "local", "const", "param", "shared::cta", "shared::cluster", "param::entry", "param::func"]) {
        "state space".into()
    } else if spec.opcode == "membar" {
        "level".into()
    } else if all_in(g, &["cta", "gpu", "sys", "cluster"]) {
        "scope".into()
    } else if all_in(g, CMP) {
        "comparison operator".into()
    } else if all_in(g, &["and", "or", "xor"]) && matches!(spec.opcode, "set" | "setp") {
        "boolean operator".into()
    } else if g.options.iter().any(|o| matches!(*o, "add" | "min" | "max" | "and" | "or" | "xor" | "cas" | "exch" | "inc" | "dec" | "popc")) && g.options.len() > 1 {
        "operation".into()
    } else if g.options.iter().all(|o| is_shape(o)) {
        "shape".into()
    } else if all_in(g, &["row", "col"]) && g.options.len() > 1 {
        "layout".into()
    } else if all_in(g, GEOM) && g.options.len() > 1 {
        "geometry".into()
    } else if all_in(g, &["v2", "v4"]) {
        "vector width".into()
    } else if all_in(g, &["trap", "clamp", "zero"]) {
        "clamp mode".into()
    } else if all_in(g, &["clamp", "wrap"]) || all_in(g, &["up", "down", "bfly", "idx"]) {
        "mode".into()
    } else if all_in(g, &["hi", "lo", "wide"]) && g.options.len() > 1 {
        "`.hi`/`.lo` selector".into()
    } else if all_in(g, &["l", "r"]) && g.options.len() > 1 {
        "direction".into()
    } else if matches!(spec.opcode, "txq" | "suq") && g.options.len() > 1 {
        "query".into()
    } else if matches!(spec.opcode, "tld4") && g.options.len() > 1 {
        "component".into()
    } else if g.options.len() == 1 {
        return format!("`.{}` modifier of `{name}`", g.options[0]);
    } else {
        "modifier".into()
    };
    const SHOW: usize = 10;
    let mut opts: Vec<String> = g.options.iter().take(SHOW).map(|o| format!(".{o}")).collect();
    if g.options.len() > SHOW {
        opts.push("...".into());
    }
    format!("{kind} of `{name}` ({})", opts.join(", "))
}

// ---------------------------------------------------------------------------------------------
// Option sets
// ---------------------------------------------------------------------------------------------

macro_rules! req {
    ($e:expr) => {
        ModGroup { required: true, options: $e }
    };
}
macro_rules! opt {
    ($e:expr) => {
        ModGroup { required: false, options: $e }
    };
}
macro_rules! spec {
    ($op:literal, $sec:literal, $min:literal, $max:literal, [$($g:expr),* $(,)?]) => {
        InstrSpec { opcode: $op, groups: &[$($g),*], min_operands: $min, max_operands: $max, section: $sec }
    };
}

const INT: &[&str] = &["u16", "u32", "u64", "s16", "s32", "s64"];
const SINT: &[&str] = &["s16", "s32", "s64"];
const INT_CC: &[&str] = &["u32", "s32", "u64", "s64"];
const I32_64: &[&str] = &["u32", "u64", "s32", "s64"];
const U32S32: &[&str] = &["u32", "s32"];
const B32: &[&str] = &["b32"];
const B32_64: &[&str] = &["b32", "b64"];
const B16_64: &[&str] = &["b16", "b32", "b64"];
const BITS_PRED: &[&str] = &["pred", "b16", "b32", "b64"];
const SHR_T: &[&str] = &["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"];
const U32: &[&str] = &["u32"];
const S32: &[&str] = &["s32"];
const F32: &[&str] = &["f32"];
const F64: &[&str] = &["f64"];
const F32_64: &[&str] = &["f32", "f64"];
const F16S: &[&str] = &["f16", "f16x2"];
const BF16S: &[&str] = &["bf16", "bf16x2"];
const HALF_ALL: &[&str] = &["f16", "f16x2", "bf16", "bf16x2"];
const PRED: &[&str] = &["pred"];
const RND: &[&str] = &["rn", "rz", "rm", "rp"];
const RN: &[&str] = &["rn"];
const FTZ: &[&str] = &["ftz"];
const SAT: &[&str] = &["sat"];
const CC: &[&str] = &["cc"];
const HI: &[&str] = &["hi"];
const HI_LO: &[&str] = &["hi", "lo"];
const HI_LO_WIDE: &[&str] = &["hi", "lo", "wide"];
const APPROX: &[&str] = &["approx"];
const APPROX_FULL: &[&str] = &["approx", "full"];
const NAN: &[&str] = &["NaN"];
const RELU: &[&str] = &["relu"];
const SATFINITE: &[&str] = &["satfinite"];
const SYNC: &[&str] = &["sync"];
const ALIGNED: &[&str] = &["aligned"];
const UNI: &[&str] = &["uni"];
/// setp/set comparison operators (9.7.5.1 omits `le` from its list, surely by mistake; 9.7.5.2
/// and 9.7.6 include it).
const CMP: &[&str] = &[
    "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
];
const CMP_H: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"];
const BOOLOP: &[&str] = &["and", "or", "xor"];
const SETP_T: &[&str] = &["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64"];
/// Source types of half `set`: the 6.4 list plus `.f16`, which its own example uses.
const SET_H_STYPE: &[&str] = &["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f16", "f32", "f64"];
const LDST_T: &[&str] = &["b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32", "f64"];
const MOV_T: &[&str] = &["pred", "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64"];
/// cvt types; `bf16` and `tf32` are ext (PTX 7.0/7.8).
const CVT_T: &[&str] = &["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f32", "f64", "bf16", "tf32"];
/// cvt rounding: `.frnd` and `.irnd` of 9.7.8.14, plus ext `.rna` (cvt.rna.tf32.f32).
const CVT_RND: &[&str] = &["rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"];
const VEC: &[&str] = &["v2", "v4"];
/// ld/st vector widths; `.v8` (32-bit elements) is ext (PTX 8.8, 256-bit accesses).
const LDST_VEC: &[&str] = &["v2", "v4", "v8"];
/// ld state spaces; `::` forms are ext (PTX 7.8).
const LD_SS: &[&str] = &["global", "shared", "local", "param", "const", "shared::cta", "shared::cluster", "param::entry", "param::func"];
const ST_SS: &[&str] = &["global", "shared", "local", "param", "shared::cta", "shared::cluster", "param::func"];
const LD_COP: &[&str] = &["ca", "cg", "cs", "lu", "cv"];
const LD_NC_COP: &[&str] = &["ca", "cg", "cs"];
const ST_COP: &[&str] = &["wb", "cg", "cs", "wt"];
/// ext (PTX 7.4+): eviction priorities, cache hint and prefetch size of ld/st.
const L1_EVICT: &[&str] = &["L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate"];
const L2_EVICT: &[&str] = &["L2::evict_normal", "L2::evict_first", "L2::evict_last"];
const L2_PREFETCH: &[&str] = &["L2::64B", "L2::128B", "L2::256B"];
const L2_HINT: &[&str] = &["L2::cache_hint"];
/// Scopes; `.cluster` is ext (PTX 7.8).
const SCOPE: &[&str] = &["cta", "gpu", "sys", "cluster"];
const ATOM_SEM: &[&str] = &["relaxed", "acquire", "release", "acq_rel"];
const RED_SEM: &[&str] = &["relaxed", "release"];
const ATOM_SPACE: &[&str] = &["global", "shared", "shared::cta", "shared::cluster"];
const ATOM_OP: &[&str] = &["and", "or", "xor", "exch", "add", "inc", "dec", "min", "max"];
const RED_OP: &[&str] = &["and", "or", "xor", "add", "inc", "dec", "min", "max"];
const ATOM_T: &[&str] = &["b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64"];
const CAS_T: &[&str] = &["b16", "b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64"];
const GEOM: &[&str] = &["1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms"];
const TEX_DTYPE: &[&str] = &["u32", "s32", "f16", "f32", "f16x2"];
const TEX_CTYPE: &[&str] = &["s32", "f32"];
const SU_GEOM: &[&str] = &["1d", "2d", "3d", "a1d", "a2d"];
const SU_CLAMP: &[&str] = &["trap", "clamp", "zero"];
const SU_T: &[&str] = &["b8", "b16", "b32", "b64"];
const SHFL_MODE: &[&str] = &["up", "down", "bfly", "idx"];
const VOTE_MODE: &[&str] = &["all", "any", "uni"];
const VCMP: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge"];
const VSECOP: &[&str] = &["add", "min", "max"];
const ROW_COL: &[&str] = &["row", "col"];
/// wmma shapes of 6.4; `m16n16k8` (tf32) and `m8n8k4` (f64) are ext (PTX 7.0).
const WMMA_SHAPE: &[&str] = &["m16n16k16", "m8n32k16", "m32n8k16", "m8n8k32", "m8n8k128", "m16n16k8", "m8n8k4"];
const WMMA_F16_SHAPE: &[&str] = &["m16n16k16", "m8n32k16", "m32n8k16"];
const WMMA_AB_T: &[&str] = &["f16", "s8", "u8", "s4", "u4", "b1", "bf16", "tf32", "f64"];
const WMMA_CD_T: &[&str] = &["f16", "f32", "s32", "f64"];
const IMMA_T: &[&str] = &["s8", "u8", "s4", "u4"];

// ---------------------------------------------------------------------------------------------
// 9.7.1 integer, 9.7.2 extended precision, 9.7.3 floating point, 9.7.4 half precision
// ---------------------------------------------------------------------------------------------

static ADD: &[InstrSpec] = &[
    spec!("add", "9.7.1.1", 3, 3, [req!(INT)]),
    spec!("add", "9.7.3.3", 3, 3, [opt!(RND), opt!(FTZ), opt!(SAT), req!(F32)]),
    spec!("add", "9.7.3.3", 3, 3, [opt!(RND), req!(F64)]),
    spec!("add", "9.7.3.3", 3, 3, [opt!(RND), opt!(FTZ), opt!(SAT), req!(&["f32x2"])]), // ext PTX 8.6, sm_100
    spec!("add", "9.7.1.1", 3, 3, [req!(SAT), req!(S32)]),
    spec!("add", "9.7.2.1", 3, 3, [req!(CC), req!(INT_CC)]),
    spec!("add", "9.7.4.1", 3, 3, [opt!(RN), opt!(FTZ), opt!(SAT), req!(F16S)]),
    spec!("add", "9.7.4.1", 3, 3, [opt!(RN), req!(BF16S)]), // ext: PTX 7.8
];

static SUB: &[InstrSpec] = &[
    spec!("sub", "9.7.1.2", 3, 3, [req!(INT)]),
    spec!("sub", "9.7.3.4", 3, 3, [opt!(RND), opt!(FTZ), opt!(SAT), req!(F32)]),
    spec!("sub", "9.7.3.4", 3, 3, [opt!(RND), req!(F64)]),
    spec!("sub", "9.7.3.4", 3, 3, [opt!(RND), opt!(FTZ), opt!(SAT), req!(&["f32x2"])]), // ext PTX 8.6, sm_100
    spec!("sub", "9.7.1.2", 3, 3, [req!(SAT), req!(S32)]),
    spec!("sub", "9.7.2.3", 3, 3, [req!(CC), req!(INT_CC)]),
    spec!("sub", "9.7.4.2", 3, 3, [opt!(RN), opt!(FTZ), opt!(SAT), req!(F16S)]),
    spec!("sub", "9.7.4.2", 3, 3, [opt!(RN), req!(BF16S)]), // ext: PTX 7.8
];

static MUL: &[InstrSpec] = &[
    spec!("mul", "9.7.1.3", 3, 3, [opt!(HI_LO_WIDE), req!(INT)]),
    spec!("mul", "9.7.3.5", 3, 3, [opt!(RND), opt!(FTZ), opt!(SAT), req!(F32)]),
    spec!("mul", "9.7.3.5", 3, 3, [opt!(RND), req!(F64)]),
    spec!("mul", "9.7.3.5", 3, 3, [opt!(RND), opt!(FTZ), opt!(SAT), req!(&["f32x2"])]), // ext PTX 8.6, sm_100
    spec!("mul", "9.7.4.3", 3, 3, [opt!(RN), opt!(FTZ), opt!(SAT), req!(F16S)]),
    spec!("mul", "9.7.4.3", 3, 3, [opt!(RN), req!(BF16S)]), // ext: PTX 7.8
];

static MAD: &[InstrSpec] = &[
    spec!("mad", "9.7.1.4", 4, 4, [opt!(HI_LO_WIDE), req!(INT)]),
    spec!("mad", "9.7.3.7", 4, 4, [opt!(RND), opt!(FTZ), opt!(SAT), req!(F32)]),
    spec!("mad", "9.7.3.7", 4, 4, [req!(RND), req!(F64)]),
    spec!("mad", "9.7.1.4", 4, 4, [req!(HI), req!(SAT), req!(S32)]),
    spec!("mad", "9.7.2.5", 4, 4, [opt!(HI_LO), req!(CC), req!(INT_CC)]),
];

static MUL24: &[InstrSpec] = &[spec!("mul24", "9.7.1.5", 3, 3, [opt!(HI_LO), req!(U32S32)])];

static MAD24: &[InstrSpec] = &[
    spec!("mad24", "9.7.1.6", 4, 4, [opt!(HI_LO), req!(U32S32)]),
    spec!("mad24", "9.7.1.6", 4, 4, [req!(HI), req!(SAT), req!(S32)]),
];

static SAD: &[InstrSpec] = &[spec!("sad", "9.7.1.7", 4, 4, [req!(INT)])];

static DIV: &[InstrSpec] = &[
    spec!("div", "9.7.1.8", 3, 3, [req!(INT)]),
    spec!("div", "9.7.3.8", 3, 3, [req!(APPROX_FULL), opt!(FTZ), req!(F32)]),
    spec!("div", "9.7.3.8", 3, 3, [req!(RND), opt!(FTZ), req!(F32)]),
    spec!("div", "9.7.3.8", 3, 3, [req!(RND), req!(F64)]),
];

static REM: &[InstrSpec] = &[spec!("rem", "9.7.1.9", 3, 3, [req!(INT)])];

static ABS: &[InstrSpec] = &[
    spec!("abs", "9.7.1.10", 2, 2, [req!(SINT)]),
    spec!("abs", "9.7.3.9", 2, 2, [opt!(FTZ), req!(F32)]),
    spec!("abs", "9.7.3.9", 2, 2, [req!(F64)]),
    spec!("abs", "9.7.4", 2, 2, [opt!(FTZ), req!(F16S)]), // ext: PTX 6.5
    spec!("abs", "9.7.4", 2, 2, [req!(BF16S)]),           // ext: PTX 7.0
];

static NEG: &[InstrSpec] = &[
    spec!("neg", "9.7.1.11", 2, 2, [req!(SINT)]),
    spec!("neg", "9.7.3.10", 2, 2, [opt!(FTZ), req!(F32)]),
    spec!("neg", "9.7.3.10", 2, 2, [req!(F64)]),
    spec!("neg", "9.7.4.5", 2, 2, [opt!(FTZ), req!(F16S)]),
    spec!("neg", "9.7.4.5", 2, 2, [req!(BF16S)]), // ext: PTX 7.0
];

static MIN: &[InstrSpec] = &[
    spec!("min", "9.7.1.12", 3, 3, [req!(INT)]),
    spec!("min", "9.7.3.11", 3, 3, [opt!(FTZ), opt!(NAN), req!(F32)]), // .NaN: ext PTX 7.0
    // ext PTX 7.2/8.8: .xorsign.abs (two inputs), .abs and three inputs (sm_100)
    spec!("min", "9.7.3.11", 3, 3, [opt!(FTZ), opt!(NAN), req!(&["xorsign"]), req!(&["abs"]), req!(F32)]),
    spec!("min", "9.7.3.11", 4, 4, [opt!(FTZ), opt!(NAN), opt!(&["abs"]), req!(F32)]),
    spec!("min", "9.7.3.11", 3, 3, [req!(F64)]),
    spec!("min", "9.7.4", 3, 3, [opt!(FTZ), opt!(NAN), req!(F16S)]), // ext: PTX 7.0
    spec!("min", "9.7.4", 3, 3, [opt!(NAN), req!(BF16S)]),           // ext: PTX 7.0
];

static MAX: &[InstrSpec] = &[
    spec!("max", "9.7.1.13", 3, 3, [req!(INT)]),
    spec!("max", "9.7.3.12", 3, 3, [opt!(FTZ), opt!(NAN), req!(F32)]), // .NaN: ext PTX 7.0
    // ext PTX 7.2/8.8: .xorsign.abs (two inputs), .abs and three inputs (sm_100)
    spec!("max", "9.7.3.12", 3, 3, [opt!(FTZ), opt!(NAN), req!(&["xorsign"]), req!(&["abs"]), req!(F32)]),
    spec!("max", "9.7.3.12", 4, 4, [opt!(FTZ), opt!(NAN), opt!(&["abs"]), req!(F32)]),
    spec!("max", "9.7.3.12", 3, 3, [req!(F64)]),
    spec!("max", "9.7.4", 3, 3, [opt!(FTZ), opt!(NAN), req!(F16S)]), // ext: PTX 7.0
    spec!("max", "9.7.4", 3, 3, [opt!(NAN), req!(BF16S)]),           // ext: PTX 7.0
];

static POPC: &[InstrSpec] = &[spec!("popc", "9.7.1.14", 2, 2, [req!(B32_64)])];
static CLZ: &[InstrSpec] = &[spec!("clz", "9.7.1.15", 2, 2, [req!(B32_64)])];
static BFIND: &[InstrSpec] = &[spec!("bfind", "9.7.1.16", 2, 2, [opt!(&["shiftamt"]), req!(I32_64)])];
// ext PTX 7.6: bmsk.mode.b32 d, a, b (a bit field mask from position a, width b).
static BMSK: &[InstrSpec] = &[spec!("bmsk", "9.7.1", 3, 3, [req!(&["clamp", "wrap"]), req!(B32)])];
static FNS: &[InstrSpec] = &[spec!("fns", "9.7.1.17", 4, 4, [req!(B32)])];
static BREV: &[InstrSpec] = &[spec!("brev", "9.7.1.18", 2, 2, [req!(B32_64)])];
static BFE: &[InstrSpec] = &[spec!("bfe", "9.7.1.19", 4, 4, [req!(I32_64)])];
static BFI: &[InstrSpec] = &[spec!("bfi", "9.7.1.20", 5, 5, [req!(B32_64)])];
static DP4A: &[InstrSpec] = &[spec!("dp4a", "9.7.1.21", 4, 4, [req!(U32S32), req!(U32S32)])];
static DP2A: &[InstrSpec] = &[spec!("dp2a", "9.7.1.22", 4, 4, [req!(HI_LO), req!(U32S32), req!(U32S32)])];

static ADDC: &[InstrSpec] = &[spec!("addc", "9.7.2.2", 3, 3, [opt!(CC), req!(INT_CC)])];
static SUBC: &[InstrSpec] = &[spec!("subc", "9.7.2.4", 3, 3, [opt!(CC), req!(INT_CC)])];
static MADC: &[InstrSpec] = &[spec!("madc", "9.7.2.6", 4, 4, [opt!(HI_LO), opt!(CC), req!(INT_CC)])];

static TESTP: &[InstrSpec] = &[spec!(
    "testp",
    "9.7.3.1",
    2,
    2,
    [req!(&["finite", "infinite", "number", "notanumber", "normal", "subnormal"]), req!(F32_64)]
)];
static COPYSIGN: &[InstrSpec] = &[spec!("copysign", "9.7.3.2", 3, 3, [req!(F32_64)])];

static FMA: &[InstrSpec] = &[
    spec!("fma", "9.7.3.6", 4, 4, [req!(RND), opt!(FTZ), opt!(SAT), req!(F32)]),
    spec!("fma", "9.7.3.6", 4, 4, [req!(RND), req!(F64)]),
    spec!("fma", "9.7.3.6", 4, 4, [req!(RND), opt!(FTZ), opt!(SAT), req!(&["f32x2"])]), // ext PTX 8.6, sm_100
    // The 6.4 syntax requires `.rn`, but its examples write `fma.f16`; accept both.
    spec!("fma", "9.7.4.4", 4, 4, [opt!(RN), opt!(FTZ), opt!(SAT), req!(F16S)]),
    spec!("fma", "9.7.4.4", 4, 4, [req!(RN), opt!(FTZ), req!(RELU), req!(F16S)]), // ext: PTX 7.0
    spec!("fma", "9.7.4.4", 4, 4, [req!(RN), opt!(RELU), req!(BF16S)]),           // ext: PTX 7.0
];

static RCP: &[InstrSpec] = &[
    spec!("rcp", "9.7.3.13", 2, 2, [req!(APPROX), opt!(FTZ), req!(F32)]),
    spec!("rcp", "9.7.3.13", 2, 2, [req!(RND), opt!(FTZ), req!(F32)]),
    spec!("rcp", "9.7.3.13", 2, 2, [req!(RND), req!(F64)]),
    spec!("rcp", "9.7.3.14", 2, 2, [req!(APPROX), req!(FTZ), req!(F64)]),
];

static SQRT: &[InstrSpec] = &[
    spec!("sqrt", "9.7.3.15", 2, 2, [req!(APPROX), opt!(FTZ), req!(F32)]),
    spec!("sqrt", "9.7.3.15", 2, 2, [req!(RND), opt!(FTZ), req!(F32)]),
    spec!("sqrt", "9.7.3.15", 2, 2, [req!(RND), req!(F64)]),
];

static RSQRT: &[InstrSpec] = &[
    spec!("rsqrt", "9.7.3.16", 2, 2, [req!(APPROX), opt!(FTZ), req!(F32)]),
    spec!("rsqrt", "9.7.3.16", 2, 2, [req!(APPROX), req!(F64)]),
    spec!("rsqrt", "9.7.3.17", 2, 2, [req!(APPROX), req!(FTZ), req!(F64)]),
];

static SIN: &[InstrSpec] = &[spec!("sin", "9.7.3.18", 2, 2, [req!(APPROX), opt!(FTZ), req!(F32)])];
static COS: &[InstrSpec] = &[spec!("cos", "9.7.3.19", 2, 2, [req!(APPROX), opt!(FTZ), req!(F32)])];
static LG2: &[InstrSpec] = &[spec!("lg2", "9.7.3.20", 2, 2, [req!(APPROX), opt!(FTZ), req!(F32)])];
static EX2: &[InstrSpec] = &[
    spec!("ex2", "9.7.3.21", 2, 2, [req!(APPROX), opt!(FTZ), req!(F32)]),
    spec!("ex2", "9.7.3.21", 2, 2, [req!(APPROX), opt!(FTZ), req!(HALF_ALL)]), // ext: PTX 7.0/7.8
];
// ext: PTX 7.0 (sm_75); not in 6.4, cited by the floating-point chapter.
static TANH: &[InstrSpec] =
    &[spec!("tanh", "9.7.3", 2, 2, [req!(APPROX), req!(&["f32", "f16", "f16x2", "bf16", "bf16x2"])])];

// ---------------------------------------------------------------------------------------------
// 9.7.5 comparison and selection, 9.7.6 half precision comparison
// ---------------------------------------------------------------------------------------------

static SET: &[InstrSpec] = &[
    spec!("set", "9.7.5.1", 3, 3, [req!(CMP), opt!(FTZ), req!(&["u32", "s32", "f32"]), req!(SETP_T)]),
    spec!("set", "9.7.5.1", 4, 4, [req!(CMP), req!(BOOLOP), opt!(FTZ), req!(&["u32", "s32", "f32"]), req!(SETP_T)]),
    spec!("set", "9.7.6.1", 3, 3, [req!(CMP_H), opt!(FTZ), req!(&["f16"]), req!(SET_H_STYPE)]),
    spec!("set", "9.7.6.1", 4, 4, [req!(CMP_H), req!(BOOLOP), opt!(FTZ), req!(&["f16"]), req!(SET_H_STYPE)]),
    // 6.4: f16x2 results; ext (PTX 7.x): u32/s32 results of an f16x2 comparison.
    spec!("set", "9.7.6.1", 3, 3, [req!(CMP_H), opt!(FTZ), req!(&["f16x2", "u32", "s32"]), req!(&["f16x2"])]),
    spec!("set", "9.7.6.1", 4, 4, [req!(CMP_H), req!(BOOLOP), opt!(FTZ), req!(&["f16x2", "u32", "s32"]), req!(&["f16x2"])]),
    // ext (PTX 7.x): integer results of an f16 comparison.
    // PTX 7.8 bfloat16 forms (no .ftz).
    spec!("set", "9.7.6.1", 3, 3, [req!(CMP_H), req!(&["bf16"]), req!(SET_H_STYPE)]),
    spec!("set", "9.7.6.1", 4, 4, [req!(CMP_H), req!(BOOLOP), req!(&["bf16"]), req!(SET_H_STYPE)]),
    spec!("set", "9.7.6.1", 3, 3, [req!(CMP_H), req!(&["bf16x2", "u32", "s32"]), req!(&["bf16x2"])]),
    spec!("set", "9.7.6.1", 4, 4, [req!(CMP_H), req!(BOOLOP), req!(&["bf16x2", "u32", "s32"]), req!(&["bf16x2"])]),
    spec!("set", "9.7.6.1", 3, 3, [req!(CMP_H), req!(&["u16", "s16", "u32", "s32"]), req!(&["bf16"])]),
    spec!("set", "9.7.6.1", 4, 4, [req!(CMP_H), req!(BOOLOP), req!(&["u16", "s16", "u32", "s32"]), req!(&["bf16"])]),
    spec!("set", "9.7.6.1", 3, 3, [req!(CMP_H), opt!(FTZ), req!(&["u16", "s16", "u32", "s32"]), req!(&["f16"])]),
    spec!("set", "9.7.6.1", 4, 4, [req!(CMP_H), req!(BOOLOP), opt!(FTZ), req!(&["u16", "s16", "u32", "s32"]), req!(&["f16"])]),
];

static SETP: &[InstrSpec] = &[
    spec!("setp", "9.7.5.2", 3, 3, [req!(CMP), opt!(FTZ), req!(SETP_T)]),
    spec!("setp", "9.7.5.2", 4, 4, [req!(CMP), req!(BOOLOP), opt!(FTZ), req!(SETP_T)]),
    // .bf16/.bf16x2: ext PTX 7.8
    spec!("setp", "9.7.6.2", 3, 3, [req!(CMP_H), opt!(FTZ), req!(HALF_ALL)]),
    spec!("setp", "9.7.6.2", 4, 4, [req!(CMP_H), req!(BOOLOP), opt!(FTZ), req!(HALF_ALL)]),
];

static SELP: &[InstrSpec] = &[spec!("selp", "9.7.5.3", 4, 4, [req!(SETP_T)])];

static SLCT: &[InstrSpec] = &[
    spec!("slct", "9.7.5.4", 4, 4, [req!(SETP_T), req!(S32)]),
    spec!("slct", "9.7.5.4", 4, 4, [opt!(FTZ), req!(SETP_T), req!(F32)]),
];

// ---------------------------------------------------------------------------------------------
// 9.7.7 logic and shift
// ---------------------------------------------------------------------------------------------

static AND: &[InstrSpec] = &[spec!("and", "9.7.7.1", 3, 3, [req!(BITS_PRED)])];
static OR: &[InstrSpec] = &[spec!("or", "9.7.7.2", 3, 3, [req!(BITS_PRED)])];
static XOR: &[InstrSpec] = &[spec!("xor", "9.7.7.3", 3, 3, [req!(BITS_PRED)])];
static NOT: &[InstrSpec] = &[spec!("not", "9.7.7.4", 2, 2, [req!(BITS_PRED)])];
static CNOT: &[InstrSpec] = &[spec!("cnot", "9.7.7.5", 2, 2, [req!(B16_64)])];
static LOP3: &[InstrSpec] = &[spec!("lop3", "9.7.7.6", 5, 5, [req!(B32)])];
static SHF: &[InstrSpec] = &[spec!("shf", "9.7.7.7", 4, 4, [req!(&["l", "r"]), req!(&["clamp", "wrap"]), req!(B32)])];
static SHL: &[InstrSpec] = &[spec!("shl", "9.7.7.8", 3, 3, [req!(B16_64)])];
static SHR: &[InstrSpec] = &[spec!("shr", "9.7.7.9", 3, 3, [req!(SHR_T)])];

// ---------------------------------------------------------------------------------------------
// 9.7.8 data movement and conversion
// ---------------------------------------------------------------------------------------------

static MOV: &[InstrSpec] = &[
    // 9.7.8.2 (also special registers, addresses of variables and functions); the vector form
    // `mov.v4.f32 {a,b,c,d}, V` is from 6.4.3.  The pack/unpack forms of 9.7.8.3
    // (`mov.b32 %r, {a,b}`) are `mov.b16/.b32/.b64` with two operands, covered by this spec.
    spec!("mov", "9.7.8.2", 2, 2, [opt!(VEC), req!(MOV_T)]),
];

static SHFL: &[InstrSpec] = &[
    spec!("shfl", "9.7.8.5", 5, 5, [req!(SYNC), req!(SHFL_MODE), req!(B32)]),
    spec!("shfl", "9.7.8.4", 4, 4, [req!(SHFL_MODE), req!(B32)]),
];

static PRMT: &[InstrSpec] =
    &[spec!("prmt", "9.7.8.6", 4, 4, [req!(B32), opt!(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])])];

static LD: &[InstrSpec] = &[
    // ld{.weak}{.ss}{.cop}{.vec}.type; eviction priorities and prefetch size: ext PTX 7.4
    spec!("ld", "9.7.8.7", 2, 2, [
        opt!(&["weak"]), opt!(LD_SS), opt!(LD_COP), opt!(L1_EVICT), opt!(L2_EVICT), opt!(L2_PREFETCH), opt!(LDST_VEC), req!(LDST_T),
    ]),
    // ext PTX 8.3: ld{.weak}{.ss}{.cop}.b128 (sm_70), no vectors.
    spec!("ld", "9.7.8.7", 2, 2, [opt!(&["weak"]), opt!(LD_SS), opt!(LD_COP), req!(&["b128"])]),
    // ld.global{.cop}.nc{.vec}.type
    spec!("ld", "9.7.8.8", 2, 2, [
        req!(&["global"]), opt!(LD_NC_COP), req!(&["nc"]), opt!(L1_EVICT), opt!(L2_EVICT), opt!(L2_PREFETCH), opt!(LDST_VEC), req!(LDST_T),
    ]),
    // ld.volatile{.ss}{.vec}.type
    spec!("ld", "9.7.8.7", 2, 2, [req!(&["volatile"]), opt!(LD_SS), opt!(L2_PREFETCH), opt!(LDST_VEC), req!(LDST_T)]),
    // ld.relaxed.scope / ld.acquire.scope {.ss}{.vec}.type
    spec!("ld", "9.7.8.7", 2, 2, [
        req!(&["relaxed", "acquire"]), req!(SCOPE), opt!(LD_SS), opt!(L1_EVICT), opt!(L2_EVICT), opt!(L2_PREFETCH), opt!(LDST_VEC), req!(LDST_T),
    ]),
    // ext PTX 7.4: `.L2::cache_hint` takes a cache-policy operand.
    spec!("ld", "9.7.8.7", 3, 3, [
        opt!(&["weak"]), opt!(LD_SS), opt!(LD_COP), opt!(L1_EVICT), opt!(L2_EVICT), req!(L2_HINT), opt!(L2_PREFETCH), opt!(LDST_VEC), req!(LDST_T),
    ]),
    spec!("ld", "9.7.8.8", 3, 3, [
        req!(&["global"]), opt!(LD_NC_COP), req!(&["nc"]), opt!(L1_EVICT), opt!(L2_EVICT), req!(L2_HINT), opt!(L2_PREFETCH), opt!(LDST_VEC), req!(LDST_T),
    ]),
    spec!("ld", "9.7.8.7", 3, 3, [
        req!(&["relaxed", "acquire"]), req!(SCOPE), opt!(LD_SS), opt!(L1_EVICT), opt!(L2_EVICT), req!(L2_HINT), opt!(L2_PREFETCH), opt!(LDST_VEC), req!(LDST_T),
    ]),
];

static LDU: &[InstrSpec] = &[spec!("ldu", "9.7.8.9", 2, 2, [opt!(&["global"]), opt!(LDST_VEC), req!(LDST_T)])];

static ST: &[InstrSpec] = &[
    // st{.weak}{.ss}{.cop}{.vec}.type; eviction priorities: ext PTX 7.4
    spec!("st", "9.7.8.10", 2, 2, [opt!(&["weak"]), opt!(ST_SS), opt!(ST_COP), opt!(L1_EVICT), opt!(L2_EVICT), opt!(LDST_VEC), req!(LDST_T)]),
    // ext PTX 8.3: st{.weak}{.ss}{.cop}.b128 (sm_70), no vectors.
    spec!("st", "9.7.8.10", 2, 2, [opt!(&["weak"]), opt!(ST_SS), opt!(ST_COP), req!(&["b128"])]),
    spec!("st", "9.7.8.10", 2, 2, [req!(&["volatile"]), opt!(ST_SS), opt!(LDST_VEC), req!(LDST_T)]),
    // The 6.4 syntax line writes `.scope` twice (`st.relaxed.scope{.ss}{.vec}.scope.type`), a
    // typo: one scope, as in ld and in the examples (`st.global.relaxed.sys.u32`).
    spec!("st", "9.7.8.10", 2, 2, [
        req!(&["relaxed", "release"]), req!(SCOPE), opt!(ST_SS), opt!(L1_EVICT), opt!(L2_EVICT), opt!(LDST_VEC), req!(LDST_T),
    ]),
    // ext PTX 7.4: `.L2::cache_hint` takes a cache-policy operand.
    spec!("st", "9.7.8.10", 3, 3, [
        opt!(&["weak"]), opt!(ST_SS), opt!(ST_COP), opt!(L1_EVICT), opt!(L2_EVICT), req!(L2_HINT), opt!(LDST_VEC), req!(LDST_T),
    ]),
    spec!("st", "9.7.8.10", 3, 3, [
        req!(&["relaxed", "release"]), req!(SCOPE), opt!(ST_SS), opt!(L1_EVICT), opt!(L2_EVICT), req!(L2_HINT), opt!(LDST_VEC), req!(LDST_T),
    ]),
];

static PREFETCH: &[InstrSpec] = &[
    spec!("prefetch", "9.7.8.11", 1, 1, [opt!(&["global", "local"]), req!(&["L1", "L2"])]),
    // ext PTX 8.0: prefetch{.const, .param}.tensormap [addr]
    spec!("prefetch", "9.7.8.11", 1, 1, [opt!(&["const", "param", "global"]), req!(&["tensormap"])]),
    spec!("prefetch", "9.7.8.11", 1, 1, [req!(&["global"]), req!(&["L2::evict_last", "L2::evict_normal"])]), // ext: PTX 7.4
];
static PREFETCHU: &[InstrSpec] = &[spec!("prefetchu", "9.7.8.11", 1, 1, [req!(&["L1"])])];

// `.param` and the `::` spaces are ext (PTX 7.x).
static ISSPACEP: &[InstrSpec] = &[spec!(
    "isspacep",
    "9.7.8.12",
    2,
    2,
    [req!(&["const", "global", "local", "shared", "param", "shared::cta", "shared::cluster", "param::entry"])]
)];

const CVTA_SPACE: &[&str] = &["const", "global", "local", "shared", "param", "shared::cta", "shared::cluster"];
static CVTA: &[InstrSpec] = &[
    spec!("cvta", "9.7.8.13", 2, 2, [req!(CVTA_SPACE), req!(&["u32", "u64"])]),
    spec!("cvta", "9.7.8.13", 2, 2, [req!(&["to"]), req!(CVTA_SPACE), req!(&["u32", "u64"])]),
];

static CVT: &[InstrSpec] = &[
    // cvt{.irnd|.frnd}{.ftz}{.sat}.dtype.atype; `.relu` is ext (PTX 7.0), `.satfinite` ext
    // (PTX 8.1).
    spec!("cvt", "9.7.8.14", 2, 2, [opt!(CVT_RND), opt!(FTZ), opt!(SAT), opt!(RELU), opt!(SATFINITE), req!(CVT_T), req!(CVT_T)]),
    // ext PTX 7.0/7.8/8.1: cvt.{rn,rz}{.relu}{.satfinite}.f16x2.f32 d, a, b (packs two values);
    // PTX 7.8: cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b.
    spec!("cvt", "9.7.8.14", 3, 3, [req!(&["rn", "rz"]), opt!(RELU), opt!(SATFINITE), req!(&["f16x2", "bf16x2", "e4m3x2", "e5m2x2"]), req!(F32)]),
    // ext PTX 7.8: cvt.rn.satfinite{.relu}.f8x2type.f16x2 d, a and cvt.rn{.relu}.f16x2.f8x2type d, a.
    spec!("cvt", "9.7.8.14", 2, 2, [req!(RN), opt!(SATFINITE), opt!(RELU), req!(&["e4m3x2", "e5m2x2"]), req!(&["f16x2"])]),
    spec!("cvt", "9.7.8.14", 2, 2, [req!(RN), opt!(RELU), req!(&["f16x2"]), req!(&["e4m3x2", "e5m2x2"])]),
    // ext PTX 8.6: cvt.rn.satfinite{.relu}.{f4x2type,f6x2type}.f32 d, a, b and
    // cvt.rn{.relu}.f16x2.{f4x2type,f6x2type} d, a.
    spec!("cvt", "9.7.8.14", 3, 3, [req!(RN), req!(SATFINITE), opt!(RELU), req!(&["e2m1x2", "e2m3x2", "e3m2x2"]), req!(F32)]),
    spec!("cvt", "9.7.8.14", 2, 2, [req!(RN), opt!(RELU), req!(&["f16x2"]), req!(&["e2m1x2", "e2m3x2", "e3m2x2"])]),
    // ext PTX 8.6: cvt.{rz,rp}{.satfinite}.ue8m0x2.{f32 d, a, b | bf16x2 d, a} and
    // cvt.rn.bf16x2.ue8m0x2 d, a.
    spec!("cvt", "9.7.8.14", 3, 3, [req!(&["rz", "rp"]), opt!(SATFINITE), req!(&["ue8m0x2"]), req!(F32)]),
    spec!("cvt", "9.7.8.14", 2, 2, [req!(&["rz", "rp"]), opt!(SATFINITE), req!(&["ue8m0x2"]), req!(&["bf16x2"])]),
    spec!("cvt", "9.7.8.14", 2, 2, [req!(RN), req!(&["bf16x2"]), req!(&["ue8m0x2"])]),
    // ext PTX 6.5: cvt.pack.sat.{u16,s16}.s32 d, a, b and
    // cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c.
    spec!("cvt", "9.7.8.14", 3, 3, [req!(&["pack"]), req!(SAT), req!(&["u16", "s16"]), req!(S32)]),
    spec!("cvt", "9.7.8.14", 4, 4, [req!(&["pack"]), req!(SAT), req!(&["u2", "s2", "u4", "s4", "u8", "s8"]), req!(S32), req!(B32)]),
];

// ---------------------------------------------------------------------------------------------
// 9.7.9 texture, 9.7.10 surface
// ---------------------------------------------------------------------------------------------

// tex{.base}.geom.v4.dtype.ctype d, [a, {b,} c] {, e} {, f}  (and .v2.f16x2); the 6.4 geometry
// list writes `.ald` for `.a1d`.
static TEX: &[InstrSpec] = &[
    spec!("tex", "9.7.9.3", 2, 4, [opt!(&["base"]), req!(GEOM), req!(VEC), req!(TEX_DTYPE), req!(TEX_CTYPE)]),
    spec!("tex", "9.7.9.3", 3, 5, [req!(&["level"]), req!(GEOM), req!(VEC), req!(TEX_DTYPE), req!(TEX_CTYPE)]),
    spec!("tex", "9.7.9.3", 4, 6, [req!(&["grad"]), req!(GEOM), req!(VEC), req!(TEX_DTYPE), req!(TEX_CTYPE)]),
];

static TLD4: &[InstrSpec] = &[spec!(
    "tld4",
    "9.7.9.4",
    2,
    4,
    [req!(&["r", "g", "b", "a"]), req!(&["2d", "a2d", "cube", "acube"]), req!(&["v4"]), req!(&["u32", "s32", "f32"]), req!(F32)]
)];

static TXQ: &[InstrSpec] = &[
    spec!("txq", "9.7.9.5", 2, 2, [
        req!(&[
            "width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords", "array_size",
            "num_mipmap_levels", "num_samples", "force_unnormalized_coords", "filter_mode", "addr_mode_0",
            "addr_mode_1", "addr_mode_2",
        ]),
        req!(B32),
    ]),
    spec!("txq", "9.7.9.5", 3, 3, [req!(&["level"]), req!(&["width", "height", "depth"]), req!(B32)]),
];

static ISTYPEP: &[InstrSpec] = &[spec!("istypep", "9.7.9.6", 2, 2, [req!(&["texref", "samplerref", "surfref"])])];

// The syntax writes `.clamp` as required but the examples omit it; it is optional here.
static SULD: &[InstrSpec] = &[spec!(
    "suld",
    "9.7.10.1",
    2,
    2,
    [req!(&["b"]), req!(SU_GEOM), opt!(&["ca", "cg", "cs", "cv"]), opt!(VEC), req!(SU_T), opt!(SU_CLAMP)]
)];

static SUST: &[InstrSpec] = &[
    spec!("sust", "9.7.10.2", 2, 2, [req!(&["b"]), req!(SU_GEOM), opt!(ST_COP), opt!(VEC), req!(SU_T), opt!(SU_CLAMP)]),
    spec!("sust", "9.7.10.2", 2, 2, [req!(&["p"]), req!(&["1d", "2d", "3d"]), opt!(VEC), req!(B32), opt!(SU_CLAMP)]),
];

const SURED_OP: &[&str] = &["add", "min", "max", "and", "or"];
static SURED: &[InstrSpec] = &[
    spec!("sured", "9.7.10.3", 2, 2, [req!(&["b"]), req!(SURED_OP), req!(&["1d", "2d", "3d"]), req!(&["u32", "u64", "s32", "b32"]), opt!(SU_CLAMP)]),
    spec!("sured", "9.7.10.3", 2, 2, [req!(&["p"]), req!(SURED_OP), req!(&["1d", "2d", "3d"]), req!(B32), opt!(SU_CLAMP)]),
];

static SUQ: &[InstrSpec] = &[spec!(
    "suq",
    "9.7.10.4",
    2,
    2,
    [req!(&["width", "height", "depth", "channel_data_type", "channel_order", "array_size", "memory_layout"]), req!(B32)]
)];

// ---------------------------------------------------------------------------------------------
// 9.7.11 control flow
// ---------------------------------------------------------------------------------------------

static BRA: &[InstrSpec] = &[spec!("bra", "9.7.11.3", 1, 1, [opt!(UNI)])];
static BRX: &[InstrSpec] = &[spec!("brx", "9.7.11.4", 2, 2, [req!(&["idx"]), opt!(UNI)])];
// call func | call (ret), func, (params) | call (ret), fptr, (params), flist-or-fproto
static CALL: &[InstrSpec] = &[spec!("call", "9.7.11.5", 1, 4, [opt!(UNI)])];
static RET: &[InstrSpec] = &[spec!("ret", "9.7.11.6", 0, 0, [opt!(UNI)])];
static EXIT: &[InstrSpec] = &[spec!("exit", "9.7.11.7", 0, 0, [])];

// ---------------------------------------------------------------------------------------------
// 9.7.12 parallel synchronization and communication
// ---------------------------------------------------------------------------------------------

const CTA: &[&str] = &["cta"]; // ext PTX 7.8: bar{.cta}, barrier{.cta}

static BAR: &[InstrSpec] = &[
    spec!("bar", "9.7.12.1", 1, 2, [opt!(CTA), req!(SYNC)]),
    spec!("bar", "9.7.12.2", 1, 1, [req!(&["warp"]), req!(SYNC)]),
    spec!("bar", "9.7.12.1", 2, 2, [opt!(CTA), req!(&["arrive"])]),
    spec!("bar", "9.7.12.1", 3, 4, [opt!(CTA), req!(&["red"]), req!(&["popc"]), req!(U32)]),
    spec!("bar", "9.7.12.1", 3, 4, [opt!(CTA), req!(&["red"]), req!(&["and", "or"]), req!(PRED)]),
];

static BARRIER: &[InstrSpec] = &[
    spec!("barrier", "9.7.12.1", 1, 2, [opt!(CTA), req!(SYNC), opt!(ALIGNED)]),
    spec!("barrier", "9.7.12.1", 2, 2, [opt!(CTA), req!(&["arrive"]), opt!(ALIGNED)]),
    spec!("barrier", "9.7.12.1", 3, 4, [opt!(CTA), req!(&["red"]), req!(&["popc"]), opt!(ALIGNED), req!(U32)]),
    spec!("barrier", "9.7.12.1", 3, 4, [opt!(CTA), req!(&["red"]), req!(&["and", "or"]), opt!(ALIGNED), req!(PRED)]),
    // ext PTX 7.8/8.0 (sm_90): barrier.cluster.arrive{.release, .relaxed}{.aligned},
    // barrier.cluster.wait{.acquire}{.aligned}
    spec!("barrier", "9.7.12.1", 0, 0, [req!(&["cluster"]), req!(&["arrive"]), opt!(&["release", "relaxed"]), opt!(ALIGNED)]),
    spec!("barrier", "9.7.12.1", 0, 0, [req!(&["cluster"]), req!(&["wait"]), opt!(&["acquire"]), opt!(ALIGNED)]),
];

static MEMBAR: &[InstrSpec] = &[spec!("membar", "9.7.12.3", 0, 0, [req!(&["cta", "gl", "sys"])])];
// fence{.sem}.scope: the 6.4 example `fence.sc;` omits the scope the syntax requires; the
// scope is required here.
static FENCE: &[InstrSpec] = &[
    spec!("fence", "9.7.12.3", 0, 0, [opt!(&["sc", "acq_rel"]), req!(SCOPE)]),
    // ext PTX 7.5-8.0 proxy fences (fence.proxy.alias, fence.proxy.async{.global,
    // .shared::cta, .shared::cluster}) and fence.mbarrier_init.release.cluster.
    spec!("fence", "9.7.12.3", 0, 0, [req!(&["proxy"]), req!(&["alias", "async"]), opt!(&["global", "shared::cta", "shared::cluster"])]),
    spec!("fence", "9.7.12.3", 0, 0, [req!(&["mbarrier_init"]), req!(&["release"]), req!(&["cluster"])]),
    // ext PTX 8.3: fence.proxy.tensormap::generic.release.scope and
    // fence.proxy.tensormap::generic.acquire.scope [addr], 128
    spec!("fence", "9.7.12.3", 0, 0, [req!(&["proxy"]), req!(&["tensormap::generic"]), req!(&["release"]), req!(&["cta", "cluster", "gpu", "sys"])]),
    spec!("fence", "9.7.12.3", 2, 2, [req!(&["proxy"]), req!(&["tensormap::generic"]), req!(&["acquire"]), req!(&["cta", "cluster", "gpu", "sys"])]),
];

static ATOM: &[InstrSpec] = &[
    spec!("atom", "9.7.12.4", 3, 3, [opt!(ATOM_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(ATOM_OP), req!(ATOM_T)]),
    spec!("atom", "9.7.12.4", 4, 4, [opt!(ATOM_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(&["cas"]), req!(CAS_T)]),
    // .bf16/.bf16x2: ext PTX 7.8
    spec!("atom", "9.7.12.4", 3, 3, [opt!(ATOM_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(&["add"]), req!(&["noftz"]), req!(HALF_ALL)]),
    // ext PTX 7.4: `.L2::cache_hint` takes a cache-policy operand.
    spec!("atom", "9.7.12.4", 4, 4, [opt!(ATOM_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(ATOM_OP), req!(L2_HINT), req!(ATOM_T)]),
    spec!("atom", "9.7.12.4", 5, 5, [opt!(ATOM_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(&["cas"]), req!(L2_HINT), req!(CAS_T)]),
];

// The 6.4 example `red.global.acquire.sys.add.u32` uses `.acquire`, which the syntax's .sem
// list does not have; it is rejected here.
static RED: &[InstrSpec] = &[
    spec!("red", "9.7.12.5", 2, 2, [opt!(RED_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(RED_OP), req!(ATOM_T)]),
    spec!("red", "9.7.12.5", 2, 2, [opt!(RED_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(&["add"]), req!(&["noftz"]), req!(HALF_ALL)]),
    // ext PTX 7.4: `.L2::cache_hint` takes a cache-policy operand.
    spec!("red", "9.7.12.5", 3, 3, [opt!(RED_SEM), opt!(SCOPE), opt!(ATOM_SPACE), req!(RED_OP), req!(L2_HINT), req!(ATOM_T)]),
];

static VOTE: &[InstrSpec] = &[
    spec!("vote", "9.7.12.7", 3, 3, [req!(SYNC), req!(VOTE_MODE), req!(PRED)]),
    spec!("vote", "9.7.12.7", 3, 3, [req!(SYNC), req!(&["ballot"]), req!(B32)]),
    spec!("vote", "9.7.12.6", 2, 2, [req!(VOTE_MODE), req!(PRED)]),
    spec!("vote", "9.7.12.6", 2, 2, [req!(&["ballot"]), req!(B32)]),
];

static MATCH: &[InstrSpec] = &[
    spec!("match", "9.7.12.8", 3, 3, [req!(&["any"]), req!(SYNC), req!(B32_64)]),
    spec!("match", "9.7.12.8", 3, 3, [req!(&["all"]), req!(SYNC), req!(B32_64)]),
];

static ACTIVEMASK: &[InstrSpec] = &[spec!("activemask", "9.7.12.9", 1, 1, [req!(B32)])];

// ext: PTX 7.0 (sm_80); not in 6.4, cited by the synchronization chapter.
static REDUX: &[InstrSpec] = &[
    spec!("redux", "9.7.12", 3, 3, [req!(SYNC), req!(&["add", "min", "max"]), req!(U32S32)]),
    spec!("redux", "9.7.12", 3, 3, [req!(SYNC), req!(&["and", "or", "xor"]), req!(B32)]),
];

// ---------------------------------------------------------------------------------------------
// 9.7.13 warp-level matrix multiply-accumulate
// ---------------------------------------------------------------------------------------------

// The 6.4 examples omit `.aligned` (`wmma.store.d.sync.m16n16k16.row.f32`), as PTX 6.0 allowed;
// it is optional here.  Sub-byte and single-bit layouts and shape/type pairings are not
// cross-checked.
static WMMA: &[InstrSpec] = &[
    spec!("wmma", "9.7.13.6", 2, 3, [
        req!(&["load"]), req!(&["a", "b"]), req!(SYNC), opt!(ALIGNED), req!(ROW_COL), req!(WMMA_SHAPE), opt!(&["global", "shared"]), req!(WMMA_AB_T),
    ]),
    spec!("wmma", "9.7.13.6", 2, 3, [
        req!(&["load"]), req!(&["c"]), req!(SYNC), opt!(ALIGNED), req!(ROW_COL), req!(WMMA_SHAPE), opt!(&["global", "shared"]), req!(WMMA_CD_T),
    ]),
    spec!("wmma", "9.7.13.7", 2, 3, [
        req!(&["store"]), req!(&["d"]), req!(SYNC), opt!(ALIGNED), req!(ROW_COL), req!(WMMA_SHAPE), opt!(&["global", "shared"]), req!(WMMA_CD_T),
    ]),
    spec!("wmma", "9.7.13.8", 4, 4, [
        req!(&["mma"]), req!(SYNC), opt!(ALIGNED), req!(ROW_COL), req!(ROW_COL), req!(WMMA_F16_SHAPE), req!(&["f16", "f32"]), req!(&["f16", "f32"]), opt!(&["satfinite"]),
    ]),
    spec!("wmma", "9.7.13.8", 4, 4, [
        req!(&["mma"]), req!(SYNC), opt!(ALIGNED), req!(ROW_COL), req!(ROW_COL), req!(&["m16n16k16", "m8n32k16", "m32n8k16", "m8n8k32"]),
        req!(S32), req!(IMMA_T), req!(IMMA_T), req!(S32), opt!(&["satfinite"]),
    ]),
    spec!("wmma", "9.7.13.8", 4, 4, [
        req!(&["mma"]), req!(&["xor"]), req!(&["popc"]), req!(SYNC), opt!(ALIGNED), req!(&["row"]), req!(&["col"]), req!(&["m8n8k128"]),
        req!(S32), req!(&["b1"]), req!(&["b1"]), req!(S32),
    ]),
    // ext PTX 7.0: bf16 / tf32 and f64 wmma.mma
    spec!("wmma", "9.7.13.8", 4, 4, [
        req!(&["mma"]), req!(SYNC), opt!(ALIGNED), req!(ROW_COL), req!(ROW_COL), req!(&["m16n16k16", "m8n32k16", "m32n8k16", "m16n16k8"]),
        req!(F32), req!(&["bf16", "tf32"]), req!(&["bf16", "tf32"]), req!(F32),
    ]),
    spec!("wmma", "9.7.13.8", 4, 4, [
        req!(&["mma"]), req!(SYNC), opt!(ALIGNED), req!(ROW_COL), req!(ROW_COL), req!(&["m8n8k4"]), opt!(RND),
        req!(F64), req!(F64), req!(F64), req!(F64),
    ]),
];

// ext PTX 6.5/7.0 (sm_75/sm_80): ldmatrix and cp.async (sections of the PTX 7.x ISA).
// PTX 8.6 (sm_100a) adds .m16n16 .trans .b8 and the unpacking .m8n16/.m16n16 .b8x16 forms
// (.b6x16_p32, .b4x16_p64 sources), which parse; the lowering refuses the unpacking ones.
static LDMATRIX: &[InstrSpec] = &[spec!("ldmatrix", "9.7.13.4.15", 2, 2, [
    req!(SYNC), req!(ALIGNED), req!(&["m8n8", "m16n16", "m8n16"]), req!(&["x1", "x2", "x4"]), opt!(&["trans"]), opt!(&["shared"]), req!(&["b16", "b8", "b8x16"]),
    opt!(&["b6x16_p32", "b4x16_p64"]),
])];

// ext PTX 7.8 (sm_90): stmatrix (PTX ISA 8.x 9.7.14.5.16), and the .m16n8 .trans .b8 shape
// of PTX 8.6 (sm_100a).
static STMATRIX: &[InstrSpec] = &[spec!("stmatrix", "9.7.14.5.16", 2, 2, [
    req!(SYNC), req!(ALIGNED), req!(&["m8n8", "m16n8"]), req!(&["x1", "x2", "x4"]), opt!(&["trans"]), opt!(&["shared"]), req!(&["b16", "b8"]),
])];

const BULK_REDOPS: &[&str] = &["add", "min", "max", "inc", "dec", "and", "or", "xor"];
const BULK_RED_TYPES: &[&str] = &["f16", "bf16", "b32", "u32", "s32", "b64", "u64", "s64", "f32", "f64"];
static CP: &[InstrSpec] = &[
    spec!("cp", "9.7.8.25.3", 3, 4, [req!(&["async"]), req!(&["ca", "cg"]), req!(&["shared"]), req!(&["global"]), opt!(L2_PREFETCH)]),
    // ext PTX 7.4: `.L2::cache_hint` takes a cache-policy operand.
    spec!("cp", "9.7.8.25.3", 4, 5, [req!(&["async"]), req!(&["ca", "cg"]), req!(&["shared"]), req!(&["global"]), req!(L2_HINT), opt!(L2_PREFETCH)]),
    spec!("cp", "9.7.8.25.4", 0, 0, [req!(&["async"]), req!(&["commit_group"])]),
    spec!("cp", "9.7.8.25.5", 1, 1, [req!(&["async"]), req!(&["wait_group"])]),
    spec!("cp", "9.7.8.25.5", 0, 0, [req!(&["async"]), req!(&["wait_all"])]),
    // ext PTX 7.0: cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]
    spec!("cp", "9.7.12.15.15", 1, 1, [req!(&["async"]), req!(&["mbarrier"]), req!(&["arrive"]), opt!(&["noinc"]), opt!(SHARED_CTA), req!(&["b64"])]),
    // ext PTX 8.0 (sm_90) bulk copies (PTX ISA 8.x 9.7.9.25.4):
    // cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.multicast::cluster}{.L2::cache_hint}
    //     [dst], [src], size, [mbar]{, ctaMask}{, policy}
    spec!("cp", "9.7.9.25.4.1", 4, 6, [
        req!(&["async"]), req!(&["bulk"]), req!(&["shared::cluster", "shared::cta"]), req!(&["global"]), req!(&["mbarrier::complete_tx::bytes"]),
        opt!(&["multicast::cluster"]), opt!(L2_HINT),
    ]),
    // cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
    spec!("cp", "9.7.9.25.4.1", 4, 4, [req!(&["async"]), req!(&["bulk"]), req!(&["shared::cluster"]), req!(&["shared::cta"]), req!(&["mbarrier::complete_tx::bytes"])]),
    // cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint} [dst], [src], size{, policy}
    spec!("cp", "9.7.9.25.4.1", 3, 4, [req!(&["async"]), req!(&["bulk"]), req!(&["global"]), req!(&["shared::cta"]), req!(&["bulk_group"]), opt!(L2_HINT)]),
    spec!("cp", "9.7.9.25.4.3", 0, 0, [req!(&["async"]), req!(&["bulk"]), req!(&["commit_group"])]),
    spec!("cp", "9.7.9.25.4.4", 1, 1, [req!(&["async"]), req!(&["bulk"]), req!(&["wait_group"]), opt!(&["read"])]),
    // cp.async.bulk.tensor (9.7.9.25.5.1): global -> shared with an mbarrier, and shared -> global
    //     [dst], [tensorMap, {coords}], [mbar]{, im2colOffsets}{, ctaMask}{, policy}
    spec!("cp", "9.7.9.25.5.1", 3, 6, [
        req!(&["async"]), req!(&["bulk"]), req!(&["tensor"]), req!(&["1d", "2d", "3d", "4d", "5d"]), req!(&["shared::cluster", "shared::cta"]), req!(&["global"]),
        opt!(&["tile", "im2col", "im2col_no_offs", "tile::gather4", "tile::scatter4", "im2col::w", "im2col::w::128"]), req!(&["mbarrier::complete_tx::bytes"]), opt!(&["multicast::cluster"]),
        opt!(&["cta_group::1", "cta_group::2"]), opt!(L2_HINT),
    ]),
    // cp.reduce.async.bulk (9.7.9.25.4.2): shared -> global in a bulk group, and shared ->
    // shared::cluster on an mbarrier, combining each element with `redOp`
    spec!("cp", "9.7.9.25.4.2", 3, 4, [
        req!(&["reduce"]), req!(&["async"]), req!(&["bulk"]), req!(&["global"]), req!(&["shared::cta"]), req!(&["bulk_group"]), opt!(L2_HINT),
        req!(BULK_REDOPS), opt!(&["noftz"]), req!(BULK_RED_TYPES),
    ]),
    spec!("cp", "9.7.9.25.4.2", 4, 4, [
        req!(&["reduce"]), req!(&["async"]), req!(&["bulk"]), req!(&["shared::cluster"]), req!(&["shared::cta"]), req!(&["mbarrier::complete_tx::bytes"]),
        req!(BULK_REDOPS), req!(BULK_RED_TYPES),
    ]),
    // cp.reduce.async.bulk.tensor (9.7.9.25.5.2): [tensorMap, {coords}], [src]{, policy}, the
    // element type from the map
    spec!("cp", "9.7.9.25.5.2", 2, 3, [
        req!(&["reduce"]), req!(&["async"]), req!(&["bulk"]), req!(&["tensor"]), req!(&["1d", "2d", "3d", "4d", "5d"]), req!(&["global"]), req!(&["shared::cta"]),
        req!(BULK_REDOPS), opt!(&["tile", "im2col_no_offs"]), req!(&["bulk_group"]), opt!(L2_HINT),
    ]),
    // cp.async.bulk.prefetch{.tensor.Nd.L2.global{.tile}} (9.7.9.25.4.3, 9.7.9.25.5.3): a hint
    spec!("cp", "9.7.9.25.4.3", 2, 3, [req!(&["async"]), req!(&["bulk"]), req!(&["prefetch"]), req!(&["L2"]), req!(&["global"]), opt!(L2_HINT)]),
    spec!("cp", "9.7.9.25.5.3", 1, 2, [
        req!(&["async"]), req!(&["bulk"]), req!(&["prefetch"]), req!(&["tensor"]), req!(&["1d", "2d", "3d", "4d", "5d"]), req!(&["L2"]), req!(&["global"]),
        opt!(&["tile", "im2col", "tile::gather4", "im2col::w", "im2col::w::128"]), opt!(L2_HINT),
    ]),
    //     [tensorMap, {coords}], [src]{, policy}
    spec!("cp", "9.7.9.25.5.1", 2, 3, [
        req!(&["async"]), req!(&["bulk"]), req!(&["tensor"]), req!(&["1d", "2d", "3d", "4d", "5d"]), req!(&["global"]), req!(&["shared::cta"]),
        opt!(&["tile", "im2col_no_offs", "tile::scatter4"]), req!(&["bulk_group"]), opt!(L2_HINT),
    ]),
];

// ext PTX 7.8/8.0 (sm_90): griddepcontrol (programmatic dependent launch), setmaxnreg (a
// register-count hint), elect.sync d|p, membermask.
static GRIDDEPCONTROL: &[InstrSpec] = &[spec!("griddepcontrol", "9.7.12", 0, 0, [req!(&["wait", "launch_dependents"])])];
static SETMAXNREG: &[InstrSpec] = &[spec!("setmaxnreg", "9.7.17", 1, 1, [req!(&["inc", "dec"]), req!(SYNC), req!(ALIGNED), req!(&["u32"])])];
static ELECT: &[InstrSpec] = &[spec!("elect", "9.7.12", 2, 2, [req!(SYNC)])];
// ext PTX 7.8 (sm_90), distributed shared memory: mapa{.shared::cluster}.type d, a, b (the
// address in CTA b of the cluster that corresponds to a); getctarank{.shared::cluster}.type
// d, a (the rank of the CTA whose shared memory a addresses).
static MAPA: &[InstrSpec] = &[spec!("mapa", "9.7.8", 3, 3, [opt!(&["shared::cluster"]), req!(&["u32", "u64"])])];
// ext PTX 8.6 (sm_100a): the tensor memory and fifth-generation tensor core (PTX ISA 9.0
// 9.7.16): tcgen05.alloc/dealloc/relinquish_alloc_permit, mma, commit, ld/st, wait, fence,
// cp, shift.
const TC_GROUP: &[&str] = &["cta_group::1", "cta_group::2"];
const TC_LDST_SHAPE: &[&str] = &["16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2"];
const TC_NUM: &[&str] = &["x1", "x2", "x4", "x8", "x16", "x32", "x64", "x128"];
static TCGEN05: &[InstrSpec] = &[
    spec!("tcgen05", "9.7.16.7.1", 2, 2, [req!(&["alloc"]), req!(TC_GROUP), req!(SYNC), req!(ALIGNED), opt!(&["shared::cta"]), req!(&["b32"])]),
    spec!("tcgen05", "9.7.16.7.1", 2, 2, [req!(&["dealloc"]), req!(TC_GROUP), req!(SYNC), req!(ALIGNED), req!(&["b32"])]),
    spec!("tcgen05", "9.7.16.7.1", 0, 0, [req!(&["relinquish_alloc_permit"]), req!(TC_GROUP), req!(SYNC), req!(ALIGNED)]),
    spec!("tcgen05", "9.7.16.10.9.1", 5, 7, [req!(&["mma"]), opt!(&["ws"]), req!(TC_GROUP), req!(&["kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8", "kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4"]), opt!(&["block_scale"]), opt!(&["scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32"]), opt!(&["ashift"]), opt!(&["collector::a::fill", "collector::a::use", "collector::a::lastuse", "collector::a::discard"])]),
    spec!("tcgen05", "9.7.16.10.9.1", 5, 7, [req!(&["mma"]), req!(&["sp"]), opt!(&["ws"]), req!(TC_GROUP), req!(&["kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8"]), opt!(&["collector::a::fill", "collector::a::use", "collector::a::lastuse", "collector::a::discard"])]),
    spec!("tcgen05", "9.7.16.12.1", 1, 2, [req!(&["commit"]), req!(TC_GROUP), req!(&["mbarrier::arrive::one"]), opt!(&["shared::cluster"]), opt!(&["multicast::cluster"]), req!(&["b64"])]),
    spec!("tcgen05", "9.7.16.8.3", 2, 3, [req!(&["ld"]), req!(SYNC), req!(ALIGNED), req!(TC_LDST_SHAPE), req!(TC_NUM), opt!(&["pack::16b"]), req!(&["b32"])]),
    spec!("tcgen05", "9.7.16.8.4", 2, 3, [req!(&["st"]), req!(SYNC), req!(ALIGNED), req!(TC_LDST_SHAPE), req!(TC_NUM), opt!(&["unpack::16b"]), req!(&["b32"])]),
    spec!("tcgen05", "9.7.16.8.5", 0, 0, [req!(&["wait::ld", "wait::st"]), req!(SYNC), req!(ALIGNED)]),
    spec!("tcgen05", "9.7.16.11.1", 0, 0, [req!(&["fence::before_thread_sync", "fence::after_thread_sync"])]),
    spec!("tcgen05", "9.7.16.9.2", 2, 2, [req!(&["cp"]), req!(TC_GROUP), req!(&["128x256b", "4x256b", "128x128b", "64x128b", "32x128b"]), opt!(&["warpx2::02_13", "warpx2::01_23", "warpx4"]), opt!(&["b8x16"]), opt!(&["b6x16_p32", "b4x16_p64"])]),
    spec!("tcgen05", "9.7.16.9.3", 1, 1, [req!(&["shift"]), req!(TC_GROUP), req!(&["down"])]),
    spec!("tcgen05", "9.7.16.9.3", 1, 1, [req!(&["shift"]), req!(&["down"]), req!(TC_GROUP)]),
];
// ext PTX 8.6 (sm_100) clusterlaunchcontrol, with the parallel synchronization and
// communication instructions (9.7.12):
// try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128
// [addr], [mbar]; query_cancel.is_canceled.pred.b128 p, handle;
// query_cancel.get_first_ctaid{::x,::y,::z}.b32.b128 d, handle and
// query_cancel.get_first_ctaid.v4.b32.b128 {x, y, z, w}, handle.
static CLUSTERLAUNCHCONTROL: &[InstrSpec] = &[
    spec!("clusterlaunchcontrol", "9.7.12", 2, 2, [req!(&["try_cancel"]), req!(&["async"]), opt!(&["shared::cta"]), req!(&["mbarrier::complete_tx::bytes"]), opt!(&["multicast::cluster::all"]), req!(&["b128"])]),
    spec!("clusterlaunchcontrol", "9.7.12", 2, 2, [req!(&["query_cancel"]), req!(&["is_canceled"]), req!(&["pred"]), req!(&["b128"])]),
    spec!("clusterlaunchcontrol", "9.7.12", 2, 2, [req!(&["query_cancel"]), req!(&["get_first_ctaid::x", "get_first_ctaid::y", "get_first_ctaid::z"]), req!(&["b32"]), req!(&["b128"])]),
    spec!("clusterlaunchcontrol", "9.7.12", 2, 2, [req!(&["query_cancel"]), req!(&["get_first_ctaid"]), req!(&["v4"]), req!(&["b32"]), req!(&["b128"])]),
];

static GETCTARANK: &[InstrSpec] = &[spec!("getctarank", "9.7.8", 2, 2, [opt!(&["shared::cluster"]), req!(&["u32", "u64"])])];

// ext PTX 7.0 mbarrier (sm_80): a barrier object in shared memory (PTX ISA 7.x section
// 9.7.12.15), with the .cluster scope and the transaction counts of sm_90 (PTX 8.0).
const SHARED_CTA: &[&str] = &["shared", "shared::cta"];
static MBARRIER: &[InstrSpec] = &[
    spec!("mbarrier", "9.7.12.15.9", 2, 2, [req!(&["init"]), opt!(SHARED_CTA), req!(&["b64"])]),
    spec!("mbarrier", "9.7.12.15.10", 1, 1, [req!(&["inval"]), opt!(SHARED_CTA), req!(&["b64"])]),
    // arrive / arrive_drop {.sem}{.scope}: state, [addr]{, count}
    spec!("mbarrier", "9.7.12.15.13", 2, 3, [req!(&["arrive", "arrive_drop"]), opt!(&["release", "relaxed"]), opt!(&["cta", "cluster"]), opt!(MBAR_SPACE), req!(&["b64"])]),
    spec!("mbarrier", "9.7.12.15.13", 3, 3, [req!(&["arrive", "arrive_drop"]), req!(&["noComplete"]), opt!(&["release", "relaxed"]), opt!(&["cta", "cluster"]), opt!(MBAR_SPACE), req!(&["b64"])]),
    // test_wait / try_wait {.parity}{.sem}{.scope}: waitComplete, [addr], state|phaseParity{, suspendTimeHint}
    spec!("mbarrier", "9.7.12.15.16", 3, 3, [req!(&["test_wait"]), opt!(&["parity"]), opt!(&["acquire", "relaxed"]), opt!(&["cta", "cluster"]), opt!(MBAR_SPACE), req!(&["b64"])]),
    spec!("mbarrier", "9.7.12.15.16", 3, 4, [req!(&["try_wait"]), opt!(&["parity"]), opt!(&["acquire", "relaxed"]), opt!(&["cta", "cluster"]), opt!(MBAR_SPACE), req!(&["b64"])]),
    spec!("mbarrier", "9.7.12.15.17", 2, 2, [req!(&["pending_count"]), req!(&["b64"])]),
    // ext PTX 8.0 (sm_90): transaction counts (PTX ISA 8.x 9.7.13.15.11-13):
    // mbarrier.expect_tx / complete_tx{.relaxed}{.scope}{.space}.b64 [addr], txCount
    spec!("mbarrier", "9.7.12.15.11", 2, 2, [req!(&["expect_tx", "complete_tx"]), opt!(&["relaxed"]), opt!(&["cta", "cluster"]), opt!(MBAR_SPACE), req!(&["b64"])]),
    // mbarrier.arrive.expect_tx{.sem}{.scope}{.space}.b64 state, [addr], txCount
    spec!("mbarrier", "9.7.12.15.13", 3, 3, [req!(&["arrive"]), req!(&["expect_tx"]), opt!(&["release", "relaxed"]), opt!(&["cta", "cluster"]), opt!(MBAR_SPACE), req!(&["b64"])]),
];
const MBAR_SPACE: &[&str] = &["shared", "shared::cta", "shared::cluster"];

// ext PTX 8.0 (sm_90a): warpgroup matrix multiply-accumulate (PTX ISA 8.x 9.7.15):
// wgmma.fence / commit_group / wait_group N, and
// wgmma.mma_async.sync.aligned.shape{.satfinite}.dtype.atype.btype d, a-desc|{a}, b-desc,
// scale-d{, imm-scale-a, imm-scale-b}{, imm-trans-a}{, imm-trans-b}. The lowering checks which
// trailing immediates each type takes; the sparse `.sp` form parses and is refused there.
const WGMMA_SHAPES: &[&str] = &[
    "m64n8k16", "m64n16k16", "m64n24k16", "m64n32k16", "m64n40k16", "m64n48k16", "m64n56k16", "m64n64k16",
    "m64n72k16", "m64n80k16", "m64n88k16", "m64n96k16", "m64n104k16", "m64n112k16", "m64n120k16", "m64n128k16",
    "m64n136k16", "m64n144k16", "m64n152k16", "m64n160k16", "m64n168k16", "m64n176k16", "m64n184k16", "m64n192k16",
    "m64n200k16", "m64n208k16", "m64n216k16", "m64n224k16", "m64n232k16", "m64n240k16", "m64n248k16", "m64n256k16",
    "m64n8k8", "m64n16k8", "m64n24k8", "m64n32k8", "m64n40k8", "m64n48k8", "m64n56k8", "m64n64k8", "m64n72k8",
    "m64n80k8", "m64n88k8", "m64n96k8", "m64n104k8", "m64n112k8", "m64n120k8", "m64n128k8", "m64n136k8", "m64n144k8",
    "m64n152k8", "m64n160k8", "m64n168k8", "m64n176k8", "m64n184k8", "m64n192k8", "m64n200k8", "m64n208k8",
    "m64n216k8", "m64n224k8", "m64n232k8", "m64n240k8", "m64n248k8", "m64n256k8", "m64n8k32", "m64n16k32",
    "m64n24k32", "m64n32k32", "m64n40k32", "m64n48k32", "m64n56k32", "m64n64k32", "m64n72k32", "m64n80k32",
    "m64n88k32", "m64n96k32", "m64n104k32", "m64n112k32", "m64n120k32", "m64n128k32", "m64n136k32", "m64n144k32",
    "m64n152k32", "m64n160k32", "m64n168k32", "m64n176k32", "m64n184k32", "m64n192k32", "m64n200k32", "m64n208k32",
    "m64n216k32", "m64n224k32", "m64n232k32", "m64n240k32", "m64n248k32", "m64n256k32", "m64n8k256", "m64n16k256",
    "m64n24k256", "m64n32k256", "m64n40k256", "m64n48k256", "m64n56k256", "m64n64k256", "m64n72k256", "m64n80k256",
    "m64n88k256", "m64n96k256", "m64n104k256", "m64n112k256", "m64n120k256", "m64n128k256", "m64n136k256",
    "m64n144k256", "m64n152k256", "m64n160k256", "m64n168k256", "m64n176k256", "m64n184k256", "m64n192k256",
    "m64n200k256", "m64n208k256", "m64n216k256", "m64n224k256", "m64n232k256", "m64n240k256", "m64n248k256",
    "m64n256k256",
    // the sparse 8-bit shapes (wgmma.mma_async.sp, K twice the dense K)
    "m64n8k64", "m64n16k64", "m64n24k64", "m64n32k64", "m64n40k64", "m64n48k64", "m64n56k64", "m64n64k64",
    "m64n72k64", "m64n80k64", "m64n88k64", "m64n96k64", "m64n104k64", "m64n112k64", "m64n120k64", "m64n128k64",
    "m64n136k64", "m64n144k64", "m64n152k64", "m64n160k64", "m64n168k64", "m64n176k64", "m64n184k64", "m64n192k64",
    "m64n200k64", "m64n208k64", "m64n216k64", "m64n224k64", "m64n232k64", "m64n240k64", "m64n248k64", "m64n256k64",
];
// ext PTX 8.3 (sm_90a): tensormap.replace.tile.field{.space}.b1024.type [addr], {ord,} new_val and
// tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
// [dst], [src], 128 (PTX ISA 8.x 9.7.9.26-27).
static TENSORMAP: &[InstrSpec] = &[
    spec!("tensormap", "9.7.9.26", 2, 2, [
        req!(&["replace"]), req!(&["tile"]),
        req!(&["global_address", "rank", "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"]),
        opt!(&["global", "shared::cta"]), req!(&["b1024"]), req!(&["b32", "b64"]),
    ]),
    spec!("tensormap", "9.7.9.26", 3, 3, [
        req!(&["replace"]), req!(&["tile"]), req!(&["box_dim", "global_dim", "global_stride", "element_stride"]),
        opt!(&["global", "shared::cta"]), req!(&["b1024"]), req!(&["b32", "b64"]),
    ]),
    spec!("tensormap", "9.7.9.27", 3, 3, [
        req!(&["cp_fenceproxy"]), req!(&["global"]), req!(&["shared::cta"]), req!(&["tensormap::generic"]), req!(&["release"]),
        req!(&["cta", "cluster", "gpu", "sys"]), req!(SYNC), req!(ALIGNED),
    ]),
];

static WGMMA: &[InstrSpec] = &[
    spec!("wgmma", "9.7.15.5.1", 0, 0, [req!(&["fence", "commit_group"]), req!(SYNC), req!(ALIGNED)]),
    spec!("wgmma", "9.7.15.5.1", 1, 1, [req!(&["wait_group"]), req!(SYNC), req!(ALIGNED)]),
    spec!("wgmma", "9.7.15.5.2", 4, 10, [
        req!(&["mma_async"]), opt!(&["sp"]), req!(SYNC), req!(ALIGNED), req!(WGMMA_SHAPES), opt!(&["satfinite"]),
        req!(&["f16", "f32", "s32"]), req!(&["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1"]),
        req!(&["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1"]), opt!(&["and"]), opt!(&["popc"]),
    ]),
];

static MMA: &[InstrSpec] = &[
    spec!("mma", "9.7.13.9", 4, 4, [
        req!(SYNC), req!(ALIGNED), req!(&["m8n8k4"]), req!(ROW_COL), req!(ROW_COL), req!(&["f16", "f32"]), req!(&["f16"]), req!(&["f16"]), req!(&["f16", "f32"]),
    ]),
    // ext PTX 7.0 (sm_80 shapes): floating point, f64, integer and single-bit forms.
    spec!("mma", "9.7.13.9", 4, 4, [
        req!(SYNC), req!(ALIGNED), req!(&["m16n8k8", "m16n8k16", "m16n8k4"]), req!(&["row"]), req!(&["col"]),
        req!(&["f16", "f32"]), req!(&["f16", "bf16", "tf32"]), req!(&["f16", "bf16", "tf32"]), req!(&["f16", "f32"]),
    ]),
    spec!("mma", "9.7.13.9", 4, 4, [
        req!(SYNC), req!(ALIGNED), req!(&["m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"]), req!(&["row"]), req!(&["col"]),
        req!(F64), req!(F64), req!(F64), req!(F64),
    ]),
    // ext PTX 8.4 (sm_89): m16n8k32 with 8-bit float multiplicands and f32 accumulators.
    spec!("mma", "9.7.13.9", 4, 4, [
        req!(SYNC), req!(ALIGNED), req!(&["m16n8k32"]), req!(&["row"]), req!(&["col"]), req!(&["f32"]), req!(&["e4m3", "e5m2"]),
        req!(&["e4m3", "e5m2"]), req!(&["f32"]),
    ]),
    spec!("mma", "9.7.13.9", 4, 4, [
        req!(SYNC), req!(ALIGNED), req!(&["m8n8k16", "m16n8k16", "m16n8k32", "m8n8k32", "m16n8k64"]), req!(&["row"]), req!(&["col"]),
        opt!(&["satfinite"]), req!(S32), req!(IMMA_T), req!(IMMA_T), req!(S32),
    ]),
    spec!("mma", "9.7.13.9", 4, 4, [
        req!(SYNC), req!(ALIGNED), req!(&["m8n8k128", "m16n8k128", "m16n8k256"]), req!(&["row"]), req!(&["col"]),
        req!(S32), req!(&["b1"]), req!(&["b1"]), req!(S32), req!(&["xor", "and"]), req!(&["popc"]),
    ]),
    // ext PTX 7.1/8.5 (sm_80, sm_89): mma.sp{::ordered_metadata} d, a, b, c, e, f with a 2:4
    // (1:2 for .tf32) structured-sparse A, metadata e and sparsity selector f (9.7.14.6)
    spec!("mma", "9.7.14.6", 6, 6, [
        req!(&["sp", "sp::ordered_metadata"]), req!(SYNC), req!(ALIGNED), req!(&["m16n8k16", "m16n8k32"]), req!(&["row"]), req!(&["col"]),
        req!(&["f16", "f32"]), req!(&["f16", "bf16"]), req!(&["f16", "bf16"]), req!(&["f16", "f32"]),
    ]),
    spec!("mma", "9.7.14.6", 6, 6, [
        req!(&["sp", "sp::ordered_metadata"]), req!(SYNC), req!(ALIGNED), req!(&["m16n8k8", "m16n8k16"]), req!(&["row"]), req!(&["col"]),
        req!(F32), req!(&["tf32"]), req!(&["tf32"]), req!(F32),
    ]),
    spec!("mma", "9.7.14.6", 6, 6, [
        req!(&["sp", "sp::ordered_metadata"]), req!(SYNC), req!(ALIGNED), req!(&["m16n8k32", "m16n8k64", "m16n8k128"]), req!(&["row"]), req!(&["col"]),
        opt!(&["satfinite"]), req!(S32), req!(IMMA_T), req!(IMMA_T), req!(S32),
    ]),
    spec!("mma", "9.7.14.6", 6, 6, [
        req!(&["sp", "sp::ordered_metadata"]), req!(SYNC), req!(ALIGNED), req!(&["m16n8k64"]), req!(&["row"]), req!(&["col"]),
        req!(F32), req!(&["e4m3", "e5m2"]), req!(&["e4m3", "e5m2"]), req!(F32),
    ]),
];

// ---------------------------------------------------------------------------------------------
// 9.7.15 scalar video, 9.7.16 SIMD video
// ---------------------------------------------------------------------------------------------
// Operand selectors (`r1.h0`, `r2.b3210`) belong to operands, not to the instruction.

macro_rules! video_scalar {
    ($name:ident, $op:literal) => {
        // vop.dtype.atype.btype{.sat} d{.dsel}, a{.asel}, b{.bsel}{, c}
        // vop.dtype.atype.btype{.sat}.op2 d, a{.asel}, b{.bsel}, c
        static $name: &[InstrSpec] = &[
            spec!($op, "9.7.15.1", 3, 4, [req!(U32S32), req!(U32S32), req!(U32S32), opt!(SAT)]),
            spec!($op, "9.7.15.1", 4, 4, [req!(U32S32), req!(U32S32), req!(U32S32), opt!(SAT), req!(VSECOP)]),
        ];
    };
}
video_scalar!(VADD, "vadd");
video_scalar!(VSUB, "vsub");
video_scalar!(VABSDIFF, "vabsdiff");
video_scalar!(VMIN, "vmin");
video_scalar!(VMAX, "vmax");

macro_rules! video_shift {
    ($name:ident, $op:literal) => {
        // vop.dtype.atype.u32{.sat}.mode{.op2}
        static $name: &[InstrSpec] = &[
            spec!($op, "9.7.15.2", 3, 4, [req!(U32S32), req!(U32S32), req!(U32), opt!(SAT), req!(&["clamp", "wrap"])]),
            spec!($op, "9.7.15.2", 4, 4, [req!(U32S32), req!(U32S32), req!(U32), opt!(SAT), req!(&["clamp", "wrap"]), req!(VSECOP)]),
        ];
    };
}
video_shift!(VSHL, "vshl");
video_shift!(VSHR, "vshr");

static VMAD: &[InstrSpec] = &[spec!(
    "vmad",
    "9.7.15.3",
    4,
    4,
    [req!(U32S32), req!(U32S32), req!(U32S32), opt!(&["po"]), opt!(SAT), opt!(&["shr7", "shr15"])]
)];

static VSET: &[InstrSpec] = &[
    spec!("vset", "9.7.15.4", 3, 4, [req!(U32S32), req!(U32S32), req!(VCMP)]),
    spec!("vset", "9.7.15.4", 4, 4, [req!(U32S32), req!(U32S32), req!(VCMP), req!(VSECOP)]),
];

macro_rules! video_simd {
    ($name:ident, $op:literal, $sec:literal) => {
        // vop.dtype.atype.btype{.sat} d{.mask}, a{.asel}, b{.bsel}, c  |  ...btype.add ...
        static $name: &[InstrSpec] =
            &[spec!($op, $sec, 4, 4, [req!(U32S32), req!(U32S32), req!(U32S32), opt!(&["sat", "add"])])];
    };
}
// The 6.4 syntax lines of 9.7.16.1 spell `vavg2`; its title, 9.7.16.3 and ptxas use `vavrg2`.
video_simd!(VADD2, "vadd2", "9.7.16.1");
video_simd!(VSUB2, "vsub2", "9.7.16.1");
video_simd!(VAVRG2, "vavrg2", "9.7.16.1");
video_simd!(VABSDIFF2, "vabsdiff2", "9.7.16.1");
video_simd!(VMIN2, "vmin2", "9.7.16.1");
video_simd!(VMAX2, "vmax2", "9.7.16.1");
video_simd!(VADD4, "vadd4", "9.7.16.3");
video_simd!(VSUB4, "vsub4", "9.7.16.3");
video_simd!(VAVRG4, "vavrg4", "9.7.16.3");
video_simd!(VABSDIFF4, "vabsdiff4", "9.7.16.3");
video_simd!(VMIN4, "vmin4", "9.7.16.3");
video_simd!(VMAX4, "vmax4", "9.7.16.3");

// vsetN.atype.btype.cmp{.add}; the 6.4 example `vset4.u32.u32.ne.max` uses `.max`, which the
// syntax does not allow; it is rejected here.
static VSET2: &[InstrSpec] = &[spec!("vset2", "9.7.16.2", 4, 4, [req!(U32S32), req!(U32S32), req!(VCMP), opt!(&["add"])])];
static VSET4: &[InstrSpec] = &[spec!("vset4", "9.7.16.4", 4, 4, [req!(U32S32), req!(U32S32), req!(VCMP), opt!(&["add"])])];

// ---------------------------------------------------------------------------------------------
// 9.7.17 miscellaneous
// ---------------------------------------------------------------------------------------------

static BRKPT: &[InstrSpec] = &[spec!("brkpt", "9.7.17.1", 0, 0, [])];
static NANOSLEEP: &[InstrSpec] = &[spec!("nanosleep", "9.7.17.2", 1, 1, [req!(U32)])];
static PMEVENT: &[InstrSpec] = &[spec!("pmevent", "9.7.17.3", 1, 1, [opt!(&["mask"])])];
static TRAP: &[InstrSpec] = &[spec!("trap", "9.7.17.4", 0, 0, [])];

// ext PTX 7.4 createpolicy: an opaque cache eviction policy for `.L2::cache_hint` operands.
const L2_PRIORITY: &[&str] = &["L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged"];
static CREATEPOLICY: &[InstrSpec] = &[
    // createpolicy.fractional.L2::primary{.L2::secondary}.b64 policy{, fraction} and the
    // range form `policy, [a], primary-size, total-size`.
    spec!("createpolicy", "9.7.8", 1, 4, [req!(&["fractional"]), req!(L2_PRIORITY), opt!(L2_PRIORITY), req!(&["b64"])]),
    // createpolicy.cvt.L2.b64 policy, sm80-policy
    spec!("createpolicy", "9.7.8", 2, 2, [req!(&["cvt"]), req!(&["L2"]), req!(&["b64"])]),
];

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits "ld.global.nc.v4.f32" into ("ld", ["global", "nc", "v4", "f32"]).
    fn split(text: &str) -> (&str, Vec<&str>) {
        let mut it = text.split('.');
        let op = it.next().unwrap();
        (op, it.collect())
    }

    fn run(text: &str, n: usize) -> Result<&'static InstrSpec, ModError> {
        let (op, mods) = split(text);
        check(op, &mods, n)
    }

    #[test]
    fn table_is_well_formed() {
        let mut nspecs = 0;
        for op in OPCODES {
            let list = specs(op);
            assert!(!list.is_empty(), "{op} has no specs");
            for s in list {
                nspecs += 1;
                assert_eq!(s.opcode, *op);
                assert!(s.groups.len() <= MAX_GROUPS, "{op} {}: too many groups", s.section);
                assert!(s.min_operands <= s.max_operands, "{op} {}", s.section);
                assert!(s.section.starts_with("9.7"), "{op}: section {}", s.section);
                for g in s.groups {
                    assert!(!g.options.is_empty());
                    for (i, o) in g.options.iter().enumerate() {
                        assert!(!o.starts_with('.') && !o.is_empty(), "{op}: option {o:?}");
                        assert!(!g.options[..i].contains(o), "{op} {}: duplicate option {o}", s.section);
                    }
                }
            }
        }
        let mut sorted = OPCODES.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), OPCODES.len(), "duplicate opcode in OPCODES");
        assert!(nspecs > OPCODES.len());
    }

    #[test]
    fn all_ptx64_opcodes_known() {
        let ptx64 = [
            "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max", "popc", "clz",
            "bfind", "fns", "brev", "bfe", "bfi", "dp4a", "dp2a", "addc", "subc", "madc", "testp", "copysign", "fma",
            "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "set", "setp", "selp", "slct", "and", "or", "xor",
            "not", "cnot", "lop3", "shf", "shl", "shr", "mov", "shfl", "prmt", "ld", "ldu", "st", "prefetch",
            "prefetchu", "isspacep", "cvta", "cvt", "tex", "tld4", "txq", "istypep", "suld", "sust", "sured", "suq",
            "bra", "brx", "call", "ret", "exit", "bar", "barrier", "membar", "fence", "atom", "red", "vote", "match",
            "activemask", "wmma", "mma", "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
            "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4",
            "vabsdiff4", "vmin4", "vmax4", "vset4", "brkpt", "nanosleep", "pmevent", "trap",
        ];
        for op in ptx64 {
            assert!(is_known_opcode(op), "{op}");
            assert!(OPCODES.contains(&op), "{op} missing from OPCODES");
        }
        for op in ["foo", "ADD", "", "ld.global", "vavg2", "mov2"] {
            assert!(!is_known_opcode(op), "{op}");
            assert_eq!(check(op, &[], 0).unwrap_err(), ModError::UnknownOpcode);
        }
    }

    /// Real instruction forms (spec examples and typical compiler output) with operand counts.
    const ACCEPT: &[(&str, usize)] = &[
        // 9.7.1 integer
        ("add.u32", 3),
        ("add.sat.s32", 3),
        ("sub.s32", 3),
        ("mul.wide.s16", 3),
        ("mul.lo.s16", 3),
        ("mul.wide.s32", 3),
        ("mul.wide.u32", 3),
        ("mul.hi.u64", 3),
        ("mul.u32", 3),
        ("mad.lo.s32", 4),
        ("mad.hi.sat.s32", 4),
        ("mad.wide.u32", 4),
        ("mul24.lo.s32", 3),
        ("mad24.lo.s32", 4),
        ("mad24.hi.sat.s32", 4),
        ("sad.u32", 4),
        ("div.s32", 3),
        ("rem.s32", 3),
        ("abs.s32", 2),
        ("neg.s32", 2),
        ("min.u16", 3),
        ("max.s32", 3),
        ("popc.b64", 2),
        ("clz.b32", 2),
        ("bfind.shiftamt.s64", 2),
        ("fns.b32", 4),
        ("brev.b32", 2),
        ("bfe.u32", 4),
        ("bfi.b32", 5),
        ("dp4a.u32.s32", 4),
        ("dp2a.hi.u32.s32", 4),
        // 9.7.2 extended precision
        ("add.cc.u32", 3),
        ("addc.cc.u32", 3),
        ("addc.u32", 3),
        ("sub.cc.u32", 3),
        ("subc.cc.u32", 3),
        ("mad.lo.cc.u32", 4),
        ("madc.hi.cc.u32", 4),
        ("madc.hi.u32", 4),
        // 9.7.3 float
        ("testp.notanumber.f32", 2),
        ("copysign.f64", 3),
        ("add.rz.ftz.f32", 3),
        ("add.f32", 3),
        ("add.rn.f64", 3),
        ("sub.rn.ftz.f32", 3),
        ("mul.ftz.f32", 3),
        ("fma.rn.ftz.f32", 4),
        ("fma.rn.f32", 4),
        ("fma.rn.ftz.sat.f32", 4),
        ("fma.rn.f64", 4),
        ("mad.f32", 4),
        ("mad.rn.f64", 4),
        ("div.approx.ftz.f32", 3),
        ("div.full.ftz.f32", 3),
        ("div.rn.f64", 3),
        ("div.rn.f32", 3),
        ("abs.ftz.f32", 2),
        ("neg.f64", 2),
        ("min.ftz.f32", 3),
        ("max.f64", 3),
        ("rcp.approx.ftz.f32", 2),
        ("rcp.rn.f64", 2),
        ("rcp.approx.ftz.f64", 2),
        ("sqrt.approx.ftz.f32", 2),
        ("sqrt.rn.f64", 2),
        ("rsqrt.approx.f64", 2),
        ("rsqrt.approx.ftz.f64", 2),
        ("sin.approx.ftz.f32", 2),
        ("cos.approx.f32", 2),
        ("lg2.approx.ftz.f32", 2),
        ("ex2.approx.ftz.f32", 2),
        // 9.7.4 half
        ("add.f16", 3),
        ("add.rn.f16", 3),
        ("add.f16x2", 3),
        ("add.rn.f16x2", 3),
        ("sub.f16x2", 3),
        ("mul.rn.f16", 3),
        ("fma.f16x2", 4),
        ("fma.rn.f16", 4),
        ("neg.ftz.f16", 2),
        // 9.7.5 / 9.7.6 comparison
        ("set.lt.and.f32.s32", 4),
        ("set.eq.u32.u32", 3),
        ("setp.lt.and.s32", 4),
        ("setp.eq.u32", 3),
        ("setp.ge.s32", 3),
        ("setp.ne.f32", 3),
        ("setp.le.f64", 3),
        ("setp.gtu.ftz.f32", 3),
        ("selp.s32", 4),
        ("selp.f32", 4),
        ("slct.u32.s32", 4),
        ("slct.ftz.u64.f32", 4),
        ("set.lt.and.f16.f16", 4),
        ("set.eq.f16x2.f16x2", 3),
        ("setp.lt.and.f16x2", 4),
        ("setp.eq.f16", 3),
        // 9.7.7 logic
        ("and.b32", 3),
        ("or.pred", 3),
        ("xor.b16", 3),
        ("not.pred", 2),
        ("cnot.b32", 2),
        ("lop3.b32", 5),
        ("shf.l.clamp.b32", 4),
        ("shf.r.wrap.b32", 4),
        ("shl.b32", 3),
        ("shr.s32", 3),
        ("shr.u16", 3),
        // 9.7.8 data movement
        ("mov.f32", 2),
        ("mov.u32", 2),
        ("mov.u64", 2),
        ("mov.pred", 2),
        ("mov.b64", 2),
        ("mov.v4.f32", 2),
        ("shfl.up.b32", 4),
        ("shfl.bfly.b32", 4),
        ("shfl.sync.up.b32", 5),
        ("shfl.sync.down.b32", 5),
        ("shfl.sync.idx.b32", 5),
        ("prmt.b32", 4),
        ("prmt.b32.f4e", 4),
        ("ld.global.f32", 2),
        ("ld.shared.v4.b32", 2),
        ("ld.const.s32", 2),
        ("ld.local.b64", 2),
        ("ld.param.u64", 2),
        ("ld.param.b8", 2),
        ("ld.u32", 2),
        ("ld.global.relaxed.gpu.u32", 2),
        ("ld.shared.acquire.gpu.u32", 2),
        ("ld.relaxed.sys.global.u64", 2),
        ("ld.volatile.global.u32", 2),
        ("ld.global.volatile.u32", 2),
        ("ld.weak.global.cg.v2.f32", 2),
        ("ld.global.cs.f32", 2),
        ("ld.global.nc.f32", 2),
        ("ld.global.nc.v4.f32", 2),
        ("ld.global.ca.nc.u8", 2),
        ("ld.global.nc.L1::no_allocate.v4.f32", 2),
        ("ld.global.nc.L1::evict_last.L2::128B.v2.u32", 2),
        ("ld.global.L2::128B.f32", 2),
        ("ld.global.L1::evict_first.L2::cache_hint.u32", 3),
        ("ld.shared::cta.u32", 2),
        ("ldu.global.v4.f32", 2),
        ("ldu.global.b32", 2),
        ("st.global.f32", 2),
        ("st.global.v4.f32", 2),
        ("st.global.v4.s32", 2),
        ("st.local.b32", 2),
        ("st.param.b64", 2),
        ("st.b16", 2),
        ("st.global.relaxed.sys.u32", 2),
        ("st.shared.release.cta.u32", 2),
        ("st.release.gpu.global.u32", 2),
        ("st.volatile.shared.u32", 2),
        ("st.global.wt.u32", 2),
        ("st.global.L1::no_allocate.f32", 2),
        ("prefetch.global.L1", 1),
        ("prefetch.L2", 1),
        ("prefetch.global.L2::evict_last", 1),
        ("prefetchu.L1", 1),
        ("isspacep.const", 2),
        ("isspacep.shared", 2),
        ("cvta.const.u32", 2),
        ("cvta.shared.u64", 2),
        ("cvta.to.global.u32", 2),
        ("cvta.to.global.u64", 2),
        ("cvta.to.shared.u64", 2),
        ("cvt.f32.s32", 2),
        ("cvt.s32.f64", 2),
        ("cvt.rni.f32.f32", 2),
        ("cvt.rn.f32.s32", 2),
        ("cvt.u32.u64", 2),
        ("cvt.rzi.s32.f32", 2),
        ("cvt.rn.ftz.sat.f32.f64", 2),
        ("cvt.rn.ftz.f32.f16", 2),
        ("cvt.rn.f16.f32", 2),
        ("cvt.f32.f16", 2),
        ("cvt.u64.u32", 2),
        ("cvt.s64.s32", 2),
        ("cvt.rn.bf16.f32", 2),
        ("cvt.rn.relu.f16x2.f32", 3),
        ("cvt.rna.tf32.f32", 2),
        // 9.7.9 / 9.7.10 texture and surface
        ("tex.3d.v4.s32.s32", 2),
        ("tex.1d.v4.s32.f32", 2),
        ("tex.a1d.v4.s32.s32", 2),
        ("tex.acube.v4.f32.f32", 2),
        ("tex.2dms.v4.s32.s32", 2),
        ("tex.1d.v2.f16x2.f32", 2),
        ("tex.grad.3d.v4.f32.f32", 4),
        ("tex.level.2d.v4.s32.f32", 4),
        ("tex.a2d.v4.s32.f32", 4),
        ("tex.2d.v4.f32.f32", 2),
        ("tld4.r.2d.v4.s32.f32", 2),
        ("tld4.r.2d.v4.f32.f32", 3),
        ("txq.width.b32", 2),
        ("txq.filter_mode.b32", 2),
        ("txq.addr_mode_0.b32", 2),
        ("txq.level.width.b32", 3),
        ("istypep.samplerref", 2),
        ("suld.b.1d.v4.b32.trap", 2),
        ("suld.b.3d.v2.b64.trap", 2),
        ("suld.b.a2d.b32", 2),
        ("sust.p.1d.v4.b32.trap", 2),
        ("sust.b.a1d.v2.b64", 2),
        ("sured.b.add.2d.u32.trap", 2),
        ("sured.p.min.1d.b32.trap", 2),
        ("suq.width.b32", 2),
        // 9.7.11 control flow
        ("bra", 1),
        ("bra.uni", 1),
        ("brx.idx", 2),
        ("call", 1),
        ("call.uni", 3),
        ("call", 4),
        ("ret", 0),
        ("ret.uni", 0),
        ("exit", 0),
        // 9.7.12 synchronization
        ("bar.sync", 1),
        ("bar.sync", 2),
        ("bar.arrive", 2),
        ("bar.red.and.pred", 3),
        ("bar.red.popc.u32", 3),
        ("bar.warp.sync", 1),
        ("barrier.sync", 1),
        ("barrier.sync.aligned", 1),
        ("barrier.red.or.aligned.pred", 4),
        ("membar.gl", 0),
        ("membar.cta", 0),
        ("fence.sc.gpu", 0),
        ("fence.acq_rel.sys", 0),
        ("fence.cta", 0),
        ("atom.global.add.s32", 3),
        ("atom.global.add.f32", 3),
        ("atom.add.global.u32", 3),
        ("atom.shared.max.u32", 3),
        ("atom.global.cas.b32", 4),
        ("atom.global.cas.b64", 4),
        ("atom.global.exch.b32", 3),
        ("atom.global.sys.add.u32", 3),
        ("atom.global.acquire.sys.inc.u32", 3),
        ("atom.relaxed.gpu.global.add.u64", 3),
        ("atom.acq_rel.gpu.global.cas.b32", 4),
        ("atom.add.noftz.f16x2", 3),
        ("atom.add.noftz.f16", 3),
        ("atom.global.cas.b16", 4),
        ("atom.global.add.f64", 3),
        ("red.global.add.s32", 2),
        ("red.shared.max.u32", 2),
        ("red.global.and.b32", 2),
        ("red.global.sys.add.u32", 2),
        ("red.relaxed.gpu.global.add.f32", 2),
        ("red.add.noftz.f16x2", 2),
        ("vote.all.pred", 2),
        ("vote.ballot.b32", 2),
        ("vote.sync.all.pred", 3),
        ("vote.sync.ballot.b32", 3),
        ("match.any.sync.b32", 3),
        ("match.all.sync.b64", 3),
        ("activemask.b32", 1),
        ("redux.sync.add.u32", 3),
        ("redux.sync.min.s32", 3),
        ("redux.sync.xor.b32", 3),
        // 9.7.13 matrix
        ("wmma.load.a.sync.aligned.row.m16n16k16.f16", 3),
        ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16", 2),
        ("wmma.load.b.sync.aligned.m16n16k16.row.f16", 2),
        ("wmma.load.c.sync.aligned.m16n16k16.col.f32", 2),
        ("wmma.load.a.sync.aligned.m32n8k16.row.u8", 2),
        ("wmma.load.a.sync.aligned.m8n8k32.row.s4", 2),
        ("wmma.load.b.sync.aligned.m16n16k16.global.col.f16", 2),
        ("wmma.store.d.sync.m16n16k16.row.f32", 2),
        ("wmma.store.d.sync.aligned.m8n8k128.row.s32", 2),
        ("wmma.store.d.sync.aligned.m16n16k16.global.col.f32", 2),
        ("wmma.mma.sync.aligned.m16n16k16.row.col.f32.f32", 4),
        ("wmma.mma.sync.m16n16k16.row.col.f32.f32", 4),
        ("wmma.mma.sync.aligned.row.col.m16n16k16.f16.f32.satfinite", 4),
        ("wmma.mma.sync.aligned.m8n32k16.row.col.s32.s8.s8.s32", 4),
        ("wmma.mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32", 4),
        ("wmma.mma.xor.popc.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32", 4),
        ("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16", 4),
        ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16", 4),
        ("mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32", 4),
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4),
        ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 4),
        ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4),
        ("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", 4),
        ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 4),
        // 9.7.15 / 9.7.16 video
        ("vadd.s32.u32.s32.sat", 3),
        ("vsub.s32.s32.u32.sat", 3),
        ("vabsdiff.s32.s32.s32.sat", 4),
        ("vmin.s32.s32.s32.sat.add", 4),
        ("vmax.u32.u32.u32", 3),
        ("vshl.s32.u32.u32.clamp", 3),
        ("vshr.u32.u32.u32.wrap", 3),
        ("vmad.s32.s32.u32.sat", 4),
        ("vmad.u32.u32.u32.shr15", 4),
        ("vmad.u32.u32.u32.po.sat.shr7", 4),
        ("vset.s32.u32.lt", 3),
        ("vset.u32.u32.ne", 3),
        ("vset.u32.u32.eq.max", 4),
        ("vadd2.s32.s32.u32.sat", 4),
        ("vsub2.s32.s32.s32.sat", 4),
        ("vmin2.s32.u32.u32.add", 4),
        ("vavrg2.u32.u32.u32", 4),
        ("vset2.s32.u32.lt", 4),
        ("vset2.u32.u32.ne.add", 4),
        ("vadd4.s32.s32.u32.sat", 4),
        ("vsub4.s32.s32.s32.sat", 4),
        ("vmin4.s32.u32.u32.add", 4),
        ("vabsdiff4.u32.u32.u32", 4),
        ("vset4.s32.u32.lt", 4),
        // 9.7.17 misc
        ("brkpt", 0),
        ("nanosleep.u32", 1),
        ("pmevent", 1),
        ("pmevent.mask", 1),
        ("trap", 0),
        // 7.x extensions
        ("tanh.approx.f32", 2),
        ("ex2.approx.f16x2", 2),
        ("min.NaN.f32", 3),
        ("max.f16x2", 3),
        ("abs.bf16", 2),
        ("fma.rn.relu.f16", 4),
        ("fma.rn.bf16x2", 4),
        ("setp.lt.bf16", 3),
        ("atom.add.noftz.bf16x2", 3),
    ];

    #[test]
    fn accepts_real_forms() {
        assert!(ACCEPT.len() >= 60);
        let mut failures = Vec::new();
        for &(text, n) in ACCEPT {
            if let Err(e) = run(text, n) {
                failures.push(format!("{text} ({n} operands): {e}"));
            }
        }
        assert!(failures.is_empty(), "rejected:\n{}", failures.join("\n"));
    }

    #[test]
    fn returns_the_right_spec() {
        assert_eq!(run("add.u32", 3).unwrap().section, "9.7.1.1");
        assert_eq!(run("add.f32", 3).unwrap().section, "9.7.3.3");
        assert_eq!(run("add.f16x2", 3).unwrap().section, "9.7.4.1");
        assert_eq!(run("add.cc.u32", 3).unwrap().section, "9.7.2.1");
        assert_eq!(run("ld.global.nc.f32", 2).unwrap().section, "9.7.8.8");
        assert_eq!(run("shfl.sync.up.b32", 5).unwrap().section, "9.7.8.5");
        assert_eq!(run("shfl.up.b32", 4).unwrap().section, "9.7.8.4");
        assert_eq!(run("bar.warp.sync", 1).unwrap().section, "9.7.12.2");
        assert_eq!(run("rcp.approx.ftz.f64", 2).unwrap().section, "9.7.3.14");
        assert_eq!(run("setp.eq.f16", 3).unwrap().section, "9.7.6.2");
        assert_eq!(run("wmma.store.d.sync.aligned.m16n16k16.row.f32", 2).unwrap().section, "9.7.13.7");
    }

    /// The operand count some spec of the opcode accepts with these modifiers, if any.
    fn accepted_count(text: &str) -> Option<usize> {
        let (op, mods) = split(text);
        (0..=6).find(|&n| check(op, &mods, n).is_ok())
    }

    #[test]
    fn order_insensitive() {
        for (a, b) in [
            ("ld.volatile.global.u32", "ld.global.volatile.u32"),
            ("atom.global.add.u32", "atom.add.global.u32"),
            ("atom.global.acquire.sys.inc.u32", "atom.acquire.sys.global.inc.u32"),
            ("cvt.rn.ftz.f32.f16", "cvt.ftz.rn.f32.f16"),
            ("fma.rn.ftz.sat.f32", "fma.sat.ftz.rn.f32"),
            ("ld.global.nc.v4.f32", "ld.nc.global.v4.f32"),
            ("setp.lt.and.s32", "setp.and.lt.s32"),
            ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16", "wmma.load.a.sync.aligned.m16n16k16.global.row.f16"),
        ] {
            let n = accepted_count(a);
            assert!(n.is_some(), "{a}");
            assert_eq!(accepted_count(b), n, "{b}");
        }
    }

    #[test]
    fn check_assigned_reports_groups() {
        let (spec, g) = check_assigned("cvt", &["rn", "f32", "s32"], 2).unwrap();
        assert_eq!(spec.section, "9.7.8.14");
        assert_eq!(g[0], 0);
        assert_eq!(spec.groups[g[1] as usize].options, CVT_T);
        assert!(g[2] > g[1]);
        assert_eq!(g[3], u8::MAX);
    }

    fn unexpected(text: &str, n: usize, m: &str) {
        match run(text, n) {
            Err(ModError::Unexpected { modifier, .. }) => assert_eq!(modifier, m, "{text}"),
            other => panic!("{text}: expected Unexpected({m}), got {other:?}"),
        }
    }

    fn missing(text: &str, n: usize, needle: &str) {
        match run(text, n) {
            Err(ModError::Missing { what }) => assert!(what.contains(needle), "{text}: {what:?} lacks {needle:?}"),
            other => panic!("{text}: expected Missing({needle}), got {other:?}"),
        }
    }

    fn bad_count(text: &str, n: usize, expected: &str) {
        match run(text, n) {
            Err(ModError::OperandCount { expected: e, found }) => {
                assert_eq!(e, expected, "{text}");
                assert_eq!(found, n);
            }
            other => panic!("{text}: expected OperandCount, got {other:?}"),
        }
    }

    #[test]
    fn rejects_with_the_right_error() {
        unexpected("and.rn.b32", 3, "rn");
        unexpected("add.u32.u32", 3, "u32");
        unexpected("add.rn.u32", 3, "rn");
        unexpected("ld.global.foo.u32", 2, "foo");
        unexpected("ld.volatile.global.ca.u32", 2, "ca");
        unexpected("ld.global.nc.lu.f32", 2, "lu");
        unexpected("st.const.u32", 2, "const");
        unexpected("st.global.ca.u32", 2, "ca");
        unexpected("mul.wide.f32", 3, "wide");
        unexpected("abs.u32", 2, "u32");
        unexpected("add.sat.u32", 3, "sat");
        unexpected("mad.hi.sat.u32", 4, "sat");
        unexpected("shl.u32", 3, "u32");
        unexpected("popc.b16", 2, "b16");
        unexpected("mov.b8", 2, "b8");
        unexpected("setp.eq.and.or.s32", 4, "or");
        unexpected("atom.global.cas.f16", 4, "f16");
        unexpected("red.global.exch.b32", 2, "exch");
        unexpected("membar.gpu", 0, "gpu");
        unexpected("vset4.u32.u32.ne.max", 4, "max");
        unexpected("bar.sync.aligned", 1, "aligned");
        unexpected("tex.4d.v4.f32.f32", 2, "4d");
        unexpected("exit.uni", 0, "uni");
        missing("cvt.f32", 2, "source type");
        missing("cvt.rn", 2, "type of `cvt`");
        missing("shfl.sync.up", 5, ".b32");
        missing("add", 3, "type of `add` (.u16, .u32, .u64, .s16, .s32, .s64)");
        missing("fma.f32", 4, "rounding modifier");
        missing("div.f32", 3, "precision modifier");
        missing("rcp.f32", 2, ".approx");
        missing("sin.f32", 2, "precision modifier of `sin` (.approx)");
        missing("ld.global", 2, "type of `ld`");
        missing("ld.relaxed.global.u32", 2, "scope");
        missing("setp.s32", 3, "comparison operator");
        missing("wmma.load.a.aligned.row.m16n16k16.f16", 2, "`.sync` modifier of `wmma.load`");
        missing("mma.sync.aligned.row.col.f32.f16.f16.f32", 4, "shape");
        missing("fence.sc", 0, "scope");
        missing("cvta.to.u64", 2, "state space");
        missing("tex.v4.f32.f32", 2, "geometry");
        bad_count("add.u32", 2, "3");
        bad_count("setp.eq.s32", 5, "3");
        bad_count("bar.sync", 3, "1 or 2");
        bad_count("call", 0, "1 to 4");
        bad_count("ret", 1, "0");
        bad_count("atom.global.cas.b32", 3, "4");
        bad_count("vadd.u32.u32.u32", 2, "3 or 4");
    }

    #[test]
    fn messages() {
        assert_eq!(run("and.rn.b32", 3).unwrap_err().to_string(), "`.rn` is not a valid modifier of `and`");
        let e = run("add.u32.u32", 3).unwrap_err().to_string();
        assert!(e.contains("`.u32` cannot be used in this form of `add`"), "{e}");
        assert_eq!(
            run("cvt.f32", 2).unwrap_err().to_string(),
            "missing source type of `cvt` (.u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64, .f16, .f32, ...)"
        );
        assert_eq!(run("shfl.sync.up", 5).unwrap_err().to_string(), "missing type of `shfl` (.b32)");
        assert_eq!(
            run("add.u32", 2).unwrap_err().to_string(),
            "wrong number of operands: expected 3 operands, found 2"
        );
        assert_eq!(ModError::UnknownOpcode.to_string(), "unknown instruction");
        let e = run("wmma.load.a.sync.aligned.row.m16n16k16.f64x", 2).unwrap_err().to_string();
        assert!(e.contains("`wmma.load`"), "{e}");
    }

    #[test]
    fn many_modifiers_do_not_panic() {
        let mods = ["u32"; 40];
        assert!(check("add", &mods, 3).is_err());
        let mods = ["global"; 20];
        assert!(check("ld", &mods, 2).is_err());
    }
}
