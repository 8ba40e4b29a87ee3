//! Registers recomputed where they are read instead of carried across sync points.
//!
//! In a kernel with synchronization, a register live across a sync point is saved to its
//! column and reloaded where the thread resumes. For a register that is a pure function of
//! values every thread can recompute — its thread index, the launch shape, kernel
//! parameters, addresses of variables, constants, and other such registers — the reload
//! hides that structure from LLVM: an address like `As + 64*tid.y + 4*k` read back from a
//! column is an unknown per-thread value, so a loop over threads accesses shared memory with
//! gathers, and each pass spends a load and a store on it.
//!
//! Such a register has exactly one definition in the kernel, unguarded, by a side-effect-free
//! instruction (`mov`, integer and float arithmetic, `setp`, `selp`, `cvt`, `cvta`, `ld.param`
//! of a kernel parameter) whose register operands hold such values too (`analyze`: a node).
//! Its value is the same wherever it is observed after the definition ran (before, it is
//! undefined, so any value is right). `FnEmitter::reg_read` evaluates the node instead of
//! reading the register: each node's instruction is emitted again, once per basic block,
//! with its operands and its destination redirected to temporaries, so no register is
//! disturbed. The register itself is then never read, and the liveness analysis (`live`) no
//! longer carries it across sync points; LLVM sees the address as a function of the thread
//! index again.

use crate::syntax::ast::{Instr, Operand, StateSpace, Stmt, Type};
use std::collections::{HashMap, HashSet};

/// Special registers whose value is fixed for a thread of a launch.
const FIXED_SPECIALS: &[&str] = &[
    "%tid",
    "%ntid",
    "%ctaid",
    "%nctaid",
    "%laneid",
    "%lanemask_eq",
    "%lanemask_le",
    "%lanemask_lt",
    "%lanemask_ge",
    "%lanemask_gt",
    "%dynamic_smem_size",
    "%total_smem_size",
];

/// Opcodes without side effects whose result depends only on their operands.
const PURE: &[&str] = &["mov", "add", "sub", "mul", "mad", "mul24", "mad24", "shl", "shr", "and", "or", "xor", "not", "cnot", "neg", "abs", "min", "max", "cvt", "cvta", "selp", "setp", "ld"];

/// A definition that can be evaluated anywhere: `instr` writes `dest` (of type `ty`), and
/// each register it reads is bound to the node that defines the value it reads.
pub struct Node<'a> {
    pub instr: &'a Instr<'a>,
    pub dest: &'a str,
    pub ty: Type,
    pub ops: Vec<(&'a str, usize)>,
}

/// The nodes of a kernel body, and the registers with exactly one definition whose
/// definition is a node (`FnEmitter::reg_read` evaluates the node instead of reading them).
///
/// Operands resolve to nodes two ways: a register with one definition in the whole body is
/// bound to it; in the prologue (the instructions that start the body up to the first label,
/// unconditional branch, call or sync point: each runs at most once, reached only from the
/// one before it) a register is bound to its latest definition there, so that `mov.u32 %r30, %tid.y; mul.wide.s32 %rd11, %r30, 64`
/// makes `%rd11` a node even though `%r30` is a loop counter later.
pub fn analyze<'a>(body: &'a [Stmt<'a>], params: &HashSet<&str>) -> Analysis<'a> {
    let mut decls: Vec<(&str, Option<u32>, Type)> = Vec::new();
    let mut instrs: Vec<&'a Instr<'a>> = Vec::new();
    if !collect(body, true, &mut decls, &mut instrs) {
        return Analysis::default();
    }
    let reg_ty = |n: &str| {
        decls.iter().find_map(|&(d, range, ty)| match range {
            None => (d == n).then_some(ty),
            Some(k) => n.strip_prefix(d).and_then(|s| s.parse::<u64>().ok()).filter(|v| *v < k as u64).map(|_| ty),
        })
    };
    // Definitions: every register named in a destination (operand 0), or anywhere inside a
    // vector, pair or list operand (conservatively counted as written).
    let mut defs: HashMap<&'a str, (u32, &'a Instr<'a>)> = HashMap::new();
    for &i in &instrs {
        for n in writes(i) {
            defs.entry(n).and_modify(|d| d.0 += 1).or_insert((1, i));
        }
    }
    let mut nodes: Vec<Node<'a>> = Vec::new();
    // The node of each register with a single definition.
    let mut single: HashMap<&'a str, usize> = HashMap::new();
    let mut in_prologue: HashSet<*const Instr<'a>> = HashSet::new();
    // Prologue: bind operands to the latest definitions.
    let mut cur: HashMap<&'a str, usize> = HashMap::new();
    for s in body {
        let Stmt::Instr(i) = s else {
            if matches!(s, Stmt::Label(_) | Stmt::Block(..)) {
                break;
            }
            continue;
        };
        // A guarded branch leaves the prologue on one path; the instructions after it are
        // reached only by falling through (no label), so the prologue goes on.
        if (i.guard.is_none() && matches!(i.opcode.name, "bra" | "brx" | "ret" | "exit" | "trap")) || i.opcode.name == "call" || super::is_sync(i) {
            break;
        }
        in_prologue.insert(i as *const _);
        let node = node_of(i, &reg_ty, params, &|o| cur.get(o).copied());
        for w in writes(i) {
            cur.remove(w);
        }
        if let Some(n) = node {
            let dest = n.dest;
            nodes.push(n);
            cur.insert(dest, nodes.len() - 1);
            if defs.get(dest).map_or(false, |d| d.0 == 1) && !is_constant(&nodes[nodes.len() - 1]) {
                single.insert(dest, nodes.len() - 1);
            }
        }
    }
    // Registers that hold one constant (`mov.u32 %r8, 31`) stay registers where they are
    // read outside a node (the scheduler never saves them, and a collective's operand read
    // from one is a constant of its site: `live::constants`); nodes still bind to them.
    let mut constants: HashMap<&'a str, usize> = HashMap::new();
    for (r, &n) in cur.iter() {
        if is_constant(&nodes[n]) && defs.get(r).map_or(false, |d| d.0 == 1) {
            constants.insert(r, n);
        }
    }
    // Elsewhere: single definitions over single definitions (grown until nothing changes, so
    // a cycle never enters).
    loop {
        let before = nodes.len();
        for (&r, &(count, i)) in &defs {
            if count != 1 || single.contains_key(r) || constants.contains_key(r) || in_prologue.contains(&(i as *const _)) {
                continue;
            }
            if let Some(n) = node_of(i, &reg_ty, params, &|o| single.get(o).copied().or_else(|| constants.get(o).copied())) {
                let constant = is_constant(&n);
                nodes.push(n);
                if constant {
                    constants.insert(r, nodes.len() - 1);
                } else {
                    single.insert(r, nodes.len() - 1);
                }
            }
        }
        if nodes.len() == before {
            break;
        }
    }
    let inductions = inductions(&instrs, &reg_ty, &nodes, &single, &constants, &cur, &in_prologue);
    let shfl_aliases = shfl_aliases(body, &reg_ty, &|r| defs.get(r).map_or(0, |d| d.0));
    Analysis { nodes, single, inductions, shfl_aliases }
}

/// What `analyze` finds: the nodes, the registers with one definition that is a node, the
/// induction registers (`inductions`) with their base nodes, and the shuffles whose operand
/// copies another register (`shfl_aliases`).
#[derive(Default)]
pub struct Analysis<'a> {
    pub nodes: Vec<Node<'a>>,
    pub single: HashMap<&'a str, usize>,
    pub inductions: HashMap<&'a str, usize>,
    pub shfl_aliases: HashMap<*const Instr<'a>, &'a str>,
}

/// Induction registers: integer registers that the prologue sets to a node's value (the
/// base, `B(t)`: `add.s64 %rd24, %rd16, %rd17`, `mov.u32 %r29, %tid.x`) and that the rest
/// of the body only steps by amounts every thread of the CTA agrees on (`add.s64 %rd24,
/// %rd24, 64`; a constant, or a register whose node reads no per-thread index).
///
/// The scheduler saves such a register as its offset `r - B(t)` (exact modulo 2^n,
/// whatever the value) and reloads it as `B(t) + offset`. Threads that run a loop in step
/// have the same offset: a region copy that finds every thread's offset equal uses one
/// scalar for all of them, and LLVM sees the register as a function of the thread index
/// again (consecutive addresses instead of gathers). The stepping rule only predicts that
/// the offsets will agree; the copy checks it (see `lanes::finish_scheduler`).
fn inductions<'a>(
    instrs: &[&'a Instr<'a>],
    reg_ty: &dyn Fn(&str) -> Option<Type>,
    nodes: &[Node<'a>],
    single: &HashMap<&'a str, usize>,
    constants: &HashMap<&'a str, usize>,
    cur: &HashMap<&'a str, usize>,
    in_prologue: &HashSet<*const Instr<'a>>,
) -> HashMap<&'a str, usize> {
    // A node that every thread of a CTA evaluates to the same value.
    fn uniform(nodes: &[Node], n: usize, depth: u32) -> bool {
        let node = &nodes[n];
        depth < 64
            && !node.instr.operands[1..].iter().any(|o| matches!(o, Operand::Name(id, _) if PER_THREAD.contains(&id.name)))
            && node.ops.iter().all(|&(_, m)| uniform(nodes, m, depth + 1))
    }
    let mut out: HashMap<&'a str, usize> = cur
        .iter()
        .filter(|(r, _)| !single.contains_key(*r) && !constants.contains_key(*r))
        .filter(|(r, _)| reg_ty(r).map_or(false, |t| (t.is_int() || t.is_bits()) && matches!(t.size(), 4 | 8)))
        .map(|(r, n)| (*r, *n))
        .collect();
    for &i in instrs {
        if in_prologue.contains(&(i as *const _)) {
            continue;
        }
        for w in writes(i) {
            if !out.contains_key(w) {
                continue;
            }
            let step = |o: &Operand| match o {
                Operand::Imm(_) => true,
                Operand::Name(id, None) => single.get(id.name).or_else(|| constants.get(id.name)).map_or(false, |&n| uniform(nodes, n, 0)),
                _ => false,
            };
            let ok = i.guard.is_none()
                && matches!(i.opcode.name, "add" | "sub")
                && !i.has_mod("cc")
                && !i.has_mod("sat")
                && i.operands.len() == 3
                && matches!(&i.operands[0], Operand::Name(d, None) if d.name == w)
                && match (&i.operands[1], &i.operands[2]) {
                    (Operand::Name(a, None), b) if a.name == w => step(b),
                    (a, Operand::Name(b, None)) if b.name == w && i.opcode.name == "add" => step(a),
                    _ => false,
                };
            if !ok {
                out.remove(w);
            }
        }
    }
    out
}

/// Shuffles whose operand is a copy of another register: `mov.b32 %r12, %f6; shfl.sync...
/// %r14, %r12, ...` (how compilers shuffle a float). Where `%r12` has this one definition,
/// unguarded, in the same straight-line stretch as the shuffle with no write of `%f6` in
/// between, the operand the thread hands over is `%f6`'s bits: a register of 4 bytes live
/// across the shuffle can be reloaded from the shuffle's operand column instead of being
/// saved to a column of its own (`lanes::finish_scheduler`). Per shuffle, that register.
fn shfl_aliases<'a>(body: &'a [Stmt<'a>], reg_ty: &dyn Fn(&str) -> Option<Type>, defs: &dyn Fn(&str) -> u32) -> HashMap<*const Instr<'a>, &'a str> {
    let size4 = |n: &str| reg_ty(n).map_or(false, |t| t != Type::Pred && t.size() == 4);
    let mut seq: Vec<&'a Stmt<'a>> = Vec::new();
    super::flatten(body, &mut seq);
    let mut out = HashMap::new();
    for (k, s) in seq.iter().enumerate() {
        let Stmt::Instr(i) = s else { continue };
        let Some(Operand::Name(a, None)) = i.operands.get(1) else { continue };
        if i.opcode.name != "shfl" || defs(a.name) != 1 {
            continue;
        }
        // Back through the straight-line stretch before the shuffle to the operand's
        // definition: a plain 32-bit copy of a 4-byte register that nothing after it writes.
        let mut clobbered: Vec<&str> = Vec::new();
        for back in seq[..k].iter().rev() {
            let Stmt::Instr(m) = back else { break };
            if matches!(m.opcode.name, "bra" | "brx" | "ret" | "exit" | "call") {
                break;
            }
            let w = writes(m);
            if !w.contains(&a.name) {
                clobbered.extend(w);
                continue;
            }
            let copy = m.opcode.name == "mov" && m.guard.is_none() && m.operands.len() == 2 && m.mods.iter().any(|t| matches!(*t, "b32" | "u32" | "s32" | "f32"));
            if let (true, Operand::Name(src, None)) = (copy, &m.operands[1]) {
                if !clobbered.contains(&src.name) && size4(src.name) && size4(a.name) && src.name != a.name {
                    out.insert(i as *const Instr<'a>, src.name);
                }
            }
            break;
        }
    }
    out
}

/// Special registers that differ between the threads of a CTA.
const PER_THREAD: &[&str] = &["%tid", "%laneid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%warpid"];

/// `mov` of an immediate.
fn is_constant(n: &Node) -> bool {
    n.instr.opcode.name == "mov" && matches!(n.instr.operands.get(1), Some(Operand::Imm(_))) && n.ops.is_empty()
}

/// `i` as a node, when it is a pure definition of a register whose register operands all
/// resolve through `bind`.
fn node_of<'a>(i: &'a Instr<'a>, reg_ty: &dyn Fn(&str) -> Option<Type>, params: &HashSet<&str>, bind: &dyn Fn(&str) -> Option<usize>) -> Option<Node<'a>> {
    if i.guard.is_some() || !PURE.contains(&i.opcode.name) || i.has_mod("cc") || (i.opcode.name == "ld" && (!i.has_mod("param") || i.has_mod("volatile"))) {
        return None;
    }
    let Some(Operand::Name(d, None)) = i.operands.first() else { return None };
    let ty = reg_ty(d.name)?;
    let mut ops = Vec::new();
    for op in &i.operands[1..] {
        match op {
            // A register in an operand expression (`r + 1`) is read like a register operand.
            Operand::Imm(e) if i.opcode.name != "ld" => {
                let mut names = Vec::new();
                e.symbols(&mut names);
                for n in names.into_iter().filter(|n| reg_ty(n).is_some()) {
                    if n == d.name {
                        return None;
                    }
                    ops.push((n, bind(n)?));
                }
            }
            Operand::Name(id, _) | Operand::Not(id) if i.opcode.name != "ld" => {
                if reg_ty(id.name).is_some() {
                    // Read and written by the same instruction: the bindings would clash.
                    if id.name == d.name {
                        return None;
                    }
                    ops.push((id.name, bind(id.name)?));
                } else if crate::syntax::validate::is_special_reg(id.name) {
                    if !FIXED_SPECIALS.contains(&id.name) {
                        return None;
                    }
                } else if matches!(op, Operand::Not(_)) {
                    return None;
                }
                // else: the address of a variable or parameter, fixed for a launch.
            }
            // ld.param of a kernel parameter (read-only for the launch).
            Operand::Mem(a) if i.opcode.name == "ld" && a.base.map_or(false, |b| params.contains(b.name)) => {}
            _ => return None,
        }
    }
    Some(Node { instr: i, dest: d.name, ty, ops })
}

/// Collects register declarations and instructions; false when a nested block declares
/// registers (a name could then mean different registers in different scopes).
fn collect<'a>(body: &'a [Stmt<'a>], top: bool, decls: &mut Vec<(&'a str, Option<u32>, Type)>, instrs: &mut Vec<&'a Instr<'a>>) -> bool {
    for s in body {
        match s {
            Stmt::Var(v) if v.space == StateSpace::Reg => {
                if !top {
                    return false;
                }
                decls.push((v.name.name, v.range, v.ty));
            }
            Stmt::Instr(i) => instrs.push(i),
            Stmt::Block(b, _) => {
                if !collect(b, false, decls, instrs) {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// The registers an instruction writes (see `written_names`).
pub(crate) fn writes<'a>(i: &Instr<'a>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (k, op) in i.operands.iter().enumerate() {
        written_names(op, k == 0, &mut out);
    }
    out
}

/// The registers an instruction's operands read (guards aside).
pub(crate) fn reads<'a>(i: &Instr<'a>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (k, op) in i.operands.iter().enumerate() {
        read_names(op, k == 0, &mut out);
    }
    out
}

/// The registers an operand reads (a destination's own name is written, not read; its
/// address registers are read).
fn read_names<'a>(op: &Operand<'a>, dest: bool, out: &mut Vec<&'a str>) {
    match op {
        Operand::Name(id, _) | Operand::Not(id) if !dest => out.push(id.name),
        Operand::Imm(e) => e.symbols(out),
        Operand::Mem(a) => out.extend(a.base.map(|b| b.name)),
        Operand::Index(id, ix, _) => {
            out.push(id.name);
            read_names(ix, false, out);
        }
        Operand::Vector(v, _) | Operand::List(v, _) | Operand::MemList(v, _) => v.iter().for_each(|o| read_names(o, dest, out)),
        Operand::Pair(a, b) => {
            read_names(a, dest, out);
            read_names(b, dest, out);
        }
        Operand::Sel(o, _, _) => read_names(o, dest, out),
        _ => {}
    }
}

fn written_names<'a>(op: &Operand<'a>, dest: bool, out: &mut Vec<&'a str>) {
    match op {
        Operand::Name(id, _) if dest => out.push(id.name),
        Operand::Not(id) if dest => out.push(id.name),
        Operand::Vector(v, _) | Operand::List(v, _) | Operand::MemList(v, _) => v.iter().for_each(|o| written_names(o, true, out)),
        Operand::Pair(a, b) => {
            written_names(a, true, out);
            written_names(b, true, out);
        }
        Operand::Sel(o, _, _) => written_names(o, dest, out),
        _ => {}
    }
}
