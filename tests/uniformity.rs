//! The uniformity analysis (`ir::uniformity`) on small kernels whose answers are worked by
//! hand from the definitions in its module comment: sources, affine strides, divergent
//! branches, join points, lane groups, temporal divergence at a loop exit.

use ptxr::ir::uniformity::{analyze, Group, Shape, Stride, Uniformity};
use ptxr::ir::{Def, Func};

mod common;

fn func_of(text: &str) -> Func<'static> {
    common::ir_of(text).funcs.remove(0)
}

/// The shape of the value the instruction on source line `line` defines.
fn at_line(f: &Func, u: &Uniformity, line: u32) -> Shape {
    let k = f
        .values
        .iter()
        .position(|v| matches!(v.def, Def::Inst { block, inst } if f.blocks[block as usize].insts[inst as usize].line == line))
        .unwrap_or_else(|| panic!("no definition on line {line}"));
    u.values[k]
}

fn block_of_line(f: &Func, line: u32) -> usize {
    f.blocks.iter().position(|b| b.insts.iter().any(|i| i.line == line)).unwrap_or_else(|| panic!("no instruction on line {line}"))
}

const KERNEL: &str = "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{
.reg .b32 %r<12>;
.reg .pred %p<4>;
.reg .b64 %rd<4>;
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mov.u32 %r3, %ctaid.x;
mad.lo.s32 %r4, %r3, %r1, %r2;
shl.b32 %r5, %r4, 2;
mov.u32 %r6, 0;
setp.ge.u32 %p1, %r2, 16;
@%p1 bra ELSE;
mov.u32 %r6, 1;
mov.u32 %r7, 0;
LOOP:
add.u32 %r7, %r7, 1;
setp.lt.u32 %p2, %r7, %r1;
@%p2 bra LOOP;
ELSE:
add.u32 %r8, %r6, 0;
mov.u32 %r9, 0;
L2:
add.u32 %r9, %r9, 1;
setp.lt.u32 %p3, %r9, %r2;
@%p3 bra L2;
add.u32 %r10, %r9, 0;
ld.param.u64 %rd1, [p];
mul.wide.u32 %rd2, %r2, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r10;
ret;
}
";

#[test]
fn sources_and_affine_strides() {
    let f = func_of(KERNEL);
    let u = analyze(&f);
    assert_eq!(at_line(&f, &u, 9), Shape::Uniform, "a kernel parameter");
    assert_eq!(at_line(&f, &u, 10), Shape::Affine(Stride::lane(1)), "%tid.x");
    assert_eq!(at_line(&f, &u, 11), Shape::Uniform, "%ctaid.x");
    assert_eq!(at_line(&f, &u, 12), Shape::Affine(Stride::lane(1)), "ctaid * n + tid.x");
    assert_eq!(at_line(&f, &u, 13), Shape::Affine(Stride::lane(4)), "<< 2");
    assert_eq!(at_line(&f, &u, 32), Shape::Affine(Stride::lane(4)), "mul.wide tid.x, 4");
    assert_eq!(at_line(&f, &u, 33), Shape::Affine(Stride::lane(4)), "uniform base + 4 * tid.x");
    assert_eq!(at_line(&f, &u, 15), Shape::Varying, "setp on tid.x");
}

#[test]
fn divergence_joins_groups_and_temporal_divergence() {
    let f = func_of(KERNEL);
    let u = analyze(&f);
    // `@%p1 bra ELSE` branches on tid.x: divergent; the loop inside its fall-through side
    // counts the same for every lane that runs it, and its branch is uniform.
    let entry = block_of_line(&f, 15);
    assert!(u.divergent[entry]);
    assert_eq!(at_line(&f, &u, 20), Shape::Uniform, "loop counter inside one side");
    let lp = block_of_line(&f, 20);
    assert!(!u.divergent[lp]);
    assert!(matches!(u.group[lp], Group::Arm(c, _) if c as usize == entry), "{:?}", u.group[lp]);
    assert_eq!(u.group[entry], Group::All);
    // At ELSE the lanes of both sides meet: %r6 is 0 or 1 by path.
    assert_eq!(at_line(&f, &u, 24), Shape::Varying, "a value joined after a divergent branch");
    assert_eq!(u.group[block_of_line(&f, 24)], Group::All, "the join runs every live lane");
    // The second loop exits on tid.x: inside it %r9 is uniform for the lanes still in it,
    // after it each lane has its own count.
    assert_eq!(at_line(&f, &u, 27), Shape::Uniform);
    let l2 = block_of_line(&f, 27);
    assert!(u.divergent[l2]);
    // Warps run the loop in lockstep (its one latch is its last block in the dispatch
    // order): the lanes still in it run it together, the exit splits none of them.
    assert_eq!(u.group[l2], Group::All, "a lockstep loop with a divergent exit");
    assert!(u.in_divergent_loop(l2 as u32) && !u.in_divergent_loop(entry as u32));
    assert_eq!(at_line(&f, &u, 30), Shape::Varying, "read after a divergent loop exit");
}

/// A loop that a uniform branch may skip, with a divergent exit: the value that leaves it
/// meets the skipped path's value in a phi where the loop exits. Worked by hand: with
/// `n != 0`, lane `l` leaves after `max(1, l)` iterations, so `%r3` there differs per lane
/// although no divergent branch joins there.
#[test]
fn values_leaving_a_divergent_loop_through_a_phi_vary() {
    let f = func_of(
        "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry k(.param .u32 n)
{
.reg .b32 %r<6>;
.reg .pred %p<3>;
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mov.u32 %r3, 0;
setp.eq.u32 %p1, %r1, 0;
@%p1 bra DONE;
LOOP:
add.u32 %r3, %r3, 1;
setp.lt.u32 %p2, %r3, %r2;
@%p2 bra LOOP;
DONE:
add.u32 %r4, %r3, 0;
ret;
}
",
    );
    let u = analyze(&f);
    assert!(!u.divergent[block_of_line(&f, 11)], "the skip is uniform");
    assert!(u.divergent[block_of_line(&f, 14)], "the exit is divergent");
    assert_eq!(at_line(&f, &u, 14), Shape::Uniform, "the count inside the loop");
    assert_eq!(at_line(&f, &u, 18), Shape::Varying, "the count after it");
}

/// The dispatch order of the warp path (`Cfg::rpo`) on every corpus kernel: a topological
/// order of the forward edges in which each loop's blocks stand together, header first.
#[test]
fn dispatch_order_keeps_each_loop_together() {
    let mut files = Vec::new();
    common::ptx_files(std::path::Path::new("tests/corpus"), &mut files);
    let mut loops = 0;
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        for f in common::ir_of(&text).funcs {
            let cfg = ptxr::ir::cfg::Cfg::new(&f);
            if !cfg.reducible {
                continue;
            }
            assert!(cfg.together, "{}: {}", p.display(), f.name);
            for (b, ss) in cfg.succs.iter().enumerate() {
                for s in ss {
                    let back = cfg.dominates(*s, b as u32);
                    assert!(back || cfg.order[*s as usize] > cfg.order[b], "{}: {}: forward edge {b} -> {s} goes back", p.display(), f.name);
                }
            }
            for (h, blocks) in &cfg.loops {
                loops += 1;
                let mut at: Vec<u32> = blocks.iter().map(|b| cfg.order[*b as usize]).collect();
                at.sort();
                assert_eq!(at[0], cfg.order[*h as usize], "{}: {}: header first", p.display(), f.name);
                assert_eq!(at[at.len() - 1] - at[0] + 1, at.len() as u32, "{}: {}: loop at {h} is not contiguous", p.display(), f.name);
            }
        }
    }
    assert!(loops > 20, "the corpus has loops ({loops})");
}

/// Rows of 32 lanes start at a multiple of 32 of `%tid.x`: its bits from bit 5 up (the warp
/// index of a one-row block) are the same for the lanes of a warp, its low five bits are the
/// lane; arithmetic that mixes them is not.
#[test]
fn warp_index_and_lane_of_tid_x() {
    let f = func_of(
        "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<12>;
.reg .b64 %rd<4>;
mov.u32 %r1, %tid.x;
shr.u32 %r2, %r1, 5;
div.u32 %r3, %r1, 64;
and.b32 %r4, %r1, -32;
and.b32 %r5, %r1, 31;
rem.u32 %r6, %r1, 32;
shr.u32 %r7, %r1, 4;
and.b32 %r8, %r1, 15;
add.u32 %r9, %r1, 1;
shr.u32 %r10, %r9, 5;
shr.u32 %r11, %tid.x, 6;
ret;
}
",
    );
    let u = analyze(&f);
    assert_eq!(at_line(&f, &u, 9), Shape::Uniform, "tid.x >> 5");
    assert_eq!(at_line(&f, &u, 10), Shape::Uniform, "tid.x / 64");
    assert_eq!(at_line(&f, &u, 11), Shape::Uniform, "tid.x & ~31: {:?}", at_line(&f, &u, 11));
    assert_eq!(at_line(&f, &u, 12), Shape::Affine(Stride::lane(1)), "tid.x & 31");
    assert_eq!(at_line(&f, &u, 13), Shape::Affine(Stride::lane(1)), "tid.x % 32");
    assert_eq!(at_line(&f, &u, 14), Shape::Varying, "tid.x >> 4 splits a warp");
    assert_eq!(at_line(&f, &u, 15), Shape::Varying, "tid.x & 15 wraps inside a warp");
    assert_eq!(at_line(&f, &u, 17), Shape::Varying, "(tid.x + 1) >> 5: lane 31 crosses into the next row");
    assert_eq!(at_line(&f, &u, 18), Shape::Uniform, "%tid.x >> 6 read directly");
}

const TILE: &str = "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry t(.param .u64 p)
{
.reg .b32 %r<12>;
.reg .pred %p<4>;
.reg .b64 %rd<4>;
mov.u32 %r1, %tid.x;
mov.u32 %r2, %tid.y;
mov.u32 %r3, %tid.z;
mov.u32 %r4, 0;
setp.eq.u32 %p1, %r2, 0;
@%p1 bra SKIP;
mov.u32 %r4, 1;
SKIP:
add.u32 %r5, %r4, %r3;
add.u32 %r6, %r1, %r3;
ret;
}
";

/// Warps of two 16-wide rows (`Layout::Tile`, worked from the module comment): `%tid.x` is
/// `lane & 15` (stride 1 along a row) and `%tid.y` is `y0 + (lane >> 4)` (stride 1 per row);
/// `%tid.z` is one value per warp. A branch on `%tid.y`, uniform in a warp that is one row,
/// divides a tile warp, and the value joined after it varies.
#[test]
fn tile_warps_step_along_rows_and_between_them() {
    use ptxr::ir::uniformity::{analyze_for, Layout};
    let f = func_of(TILE);
    let rows = analyze_for(&f, Layout::Rows);
    let tile = analyze_for(&f, Layout::Tile);
    assert_eq!(at_line(&f, &rows, 9), Shape::Affine(Stride::lane(1)));
    assert_eq!(at_line(&f, &tile, 9), Shape::Affine(Stride { x: 1, r: 0 }), "%tid.x in a tile warp");
    assert_eq!(at_line(&f, &rows, 10), Shape::Uniform);
    assert_eq!(at_line(&f, &tile, 10), Shape::Affine(Stride { x: 0, r: 1 }), "%tid.y in a tile warp");
    assert_eq!(at_line(&f, &tile, 11), Shape::Uniform, "%tid.z in a tile warp");
    let entry = block_of_line(&f, 13);
    assert!(!rows.divergent[entry] && tile.divergent[entry], "a branch on %tid.y");
    assert_eq!(at_line(&f, &rows, 17), Shape::Uniform);
    assert_eq!(at_line(&f, &tile, 17), Shape::Varying, "joined after the branch on %tid.y");
    assert_eq!(at_line(&f, &rows, 18), Shape::Affine(Stride::lane(1)));
    assert_eq!(at_line(&f, &tile, 18), Shape::Affine(Stride::lane(1)), "%tid.x + %tid.z");
}

const TILE_ADDRESSES: &str = "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry t(.param .u64 p)
{
.reg .b32 %r<12>;
.reg .f32 %f<8>;
.reg .b64 %rd<12>;
.shared .align 4 .b8 tile[1024];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %tid.y;
mul.wide.u32 %rd1, %r2, 64;
mov.u64 %rd2, tile;
add.s64 %rd3, %rd2, %rd1;
ld.shared.f32 %f1, [%rd3+8];
mul.wide.u32 %rd4, %r1, 4;
add.s64 %rd5, %rd2, %rd4;
ld.shared.f32 %f2, [%rd5+128];
add.s64 %rd6, %rd3, %rd4;
ld.shared.f32 %f3, [%rd6];
shl.b32 %r3, %r2, 4;
add.s32 %r4, %r3, %r1;
mul.wide.u32 %rd7, %r4, 4;
add.s64 %rd8, %rd2, %rd7;
ld.shared.f32 %f4, [%rd8];
mul.wide.u32 %rd9, %r1, 8;
add.s64 %rd10, %rd2, %rd9;
ld.shared.f32 %f5, [%rd10];
ret;
}
";

/// Addresses in a tile warp, worked by hand from the strides of `%tid.x` (1 per lane of a
/// row) and `%tid.y` (1 per row): `tile[ty][2]` is one word per row, rows 64 bytes apart;
/// `tile[2][tx]` one run of 16 words that both rows read; `tile[ty][tx]` (a 16x16 tile in
/// shared memory) and `tile[16 * ty + tx]` the warp's 32 consecutive words; `tile[2 * tx]`
/// every other word.
#[test]
fn tile_warp_accesses() {
    use ptxr::ir::uniformity::{analyze_for, Access, Layout};
    let f = func_of(TILE_ADDRESSES);
    let tile = analyze_for(&f, Layout::Tile);
    let access = |line: u32| {
        let b = block_of_line(&f, line);
        let ld = f.blocks[b].insts.iter().find(|i| i.line == line).unwrap();
        tile.access(&f, ld, b as u32)
    };
    assert_eq!(at_line(&f, &tile, 14), Shape::Affine(Stride { x: 0, r: 64 }));
    assert_eq!(access(15), Some(Access::PerRow(64)), "tile[ty][2]");
    assert_eq!(access(18), Some(Access::Consecutive), "tile[2][tx]");
    assert_eq!(at_line(&f, &tile, 19), Shape::Affine(Stride { x: 4, r: 64 }));
    assert_eq!(access(20), Some(Access::Consecutive), "tile[ty][tx]");
    assert_eq!(at_line(&f, &tile, 22), Shape::Affine(Stride { x: 1, r: 16 }), "16 * ty + tx");
    assert_eq!(access(25), Some(Access::Consecutive), "tile[16 * ty + tx]");
    assert_eq!(access(28), Some(Access::Strided(8)), "tile[2 * tx]");
    // In a warp of one row, `%tid.y` is the warp's: `tile[ty][2]` is one word.
    assert_eq!(analyze_for(&f, Layout::Rows).access(&f, f.blocks[block_of_line(&f, 15)].insts.iter().find(|i| i.line == 15).unwrap(), block_of_line(&f, 15) as u32), Some(Access::Uniform));
    // A lane's offset from the base: lane 17 is `%tid.x` 1 of the second row.
    assert_eq!(Stride { x: 4, r: 64 }.at(17, true), 68);
    assert_eq!(Stride { x: 4, r: 0 }.at(17, false), 68);
    assert_eq!(Stride { x: 0, r: 64 }.at(17, false), 0);
}

const ANCHORED: &str = "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry a(.param .u64 p, .param .u32 n)
{
.reg .b32 %r<12>;
.reg .pred %p<4>;
.reg .b64 %rd<12>;
ld.param.u64 %rd1, [p];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mul.wide.s32 %rd2, %r2, 4;
add.s64 %rd3, %rd1, %rd2;
mul.wide.s32 %rd4, %r1, 4;
mov.u32 %r3, 0;
LOOP:
ld.global.u32 %r4, [%rd3];
add.s64 %rd3, %rd3, %rd4;
add.s64 %rd5, %rd3, 8;
st.global.u32 [%rd5], %r4;
add.u32 %r3, %r3, 1;
setp.lt.u32 %p1, %r3, %r1;
@%p1 bra LOOP;
mov.u32 %r5, %tid.y;
mul.wide.u32 %rd6, %r5, 4;
add.s64 %rd7, %rd1, %rd6;
add.s64 %rd8, %rd7, %rd2;
st.global.u32 [%rd8], %r4;
ret;
}
";

/// Anchored webs (`codegen::warp::Plan::anchored`, worked from `anchored_webs`' comment):
/// the pointer `p + sext(tid.x) * 4` stepped by `4 n` in the loop, and `+ 8` of it, hold a
/// scalar plus `%rd2` (`mul.wide.s32` of `%tid.x`: not exactly affine, a read recomputes
/// it). `%rd8`, `%rd2` added to `p + 4 tid.y`, is a value a read recomputes whole (from
/// the parameter and the thread ids), so nothing is held for it. In a tile warp `%tid.x`
/// steps along each row as it does along a warp of one row, and the same webs are anchored.
#[test]
fn pointers_stepped_from_a_lane_address_are_anchored() {
    use ptxr::codegen::warp::{plan, Layout};
    let f = func_of(ANCHORED);
    let rows = plan(&f, Layout::Rows, &[], &[]).unwrap();
    let web = |reg: &str| -> Vec<(u32, String)> { rows.anchored.keys().filter(|k| k.1.split('#').next() == Some(reg)).cloned().collect() };
    let r_of = |reg: &str| -> Vec<String> { rows.anchored.iter().filter(|(k, _)| k.1.split('#').next() == Some(reg)).map(|(_, r)| rows.key(&f, *r).1.split('#').next().unwrap().to_string()).collect() };
    assert_eq!(web("%rd3").len(), 1, "the stepped pointer: {:?}", rows.anchored);
    assert_eq!(r_of("%rd3"), vec!["%rd2"]);
    assert_eq!(r_of("%rd5"), vec!["%rd2"], "a uniform offset from it");
    assert!(web("%rd8").is_empty() && rows.remat.iter().any(|v| rows.key(&f, *v).1.starts_with("%rd8#")), "recomputed where read");
    assert!(!rows.affine.keys().any(|k| k.1.starts_with("%rd3#")), "not exactly affine");
    let tile = plan(&f, Layout::Tile, &[], &[]).unwrap();
    let mut a: Vec<_> = rows.anchored.keys().collect();
    let mut b: Vec<_> = tile.anchored.keys().collect();
    a.sort();
    b.sort();
    assert_eq!(a, b, "{:?}", tile.anchored);
}

const LOCALS: &str = "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry l(.param .u64 p)
{
.local .align 4 .b32 arr[4];
.shared .align 4 .b32 sh[4];
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
mov.u64 %rd1, arr;
mov.u64 %rd2, sh;
cvta.local.u64 %rd3, %rd1;
add.s64 %rd4, %rd2, 4;
ld.local.u32 %r1, [arr];
ld.shared.u32 %r2, [sh];
ret;
}
";

/// A `.local` variable has a copy per thread (PTX ISA 5.1.5), so its address differs per
/// lane, while a `.shared` variable's is the CTA's: `mov` of the `.local` name, and
/// everything computed from it, vary; the same of the `.shared` name is uniform.
#[test]
fn local_addresses_vary_per_lane() {
    let f = func_of(LOCALS);
    let u = analyze(&f);
    assert_eq!(at_line(&f, &u, 10), Shape::Varying, "address of a .local variable");
    assert_eq!(at_line(&f, &u, 11), Shape::Uniform, "address of a .shared variable");
    assert_eq!(at_line(&f, &u, 12), Shape::Varying);
    assert_eq!(at_line(&f, &u, 13), Shape::Uniform);
    assert_eq!(at_line(&f, &u, 14), Shape::Varying, "a load from the lane's own copy");
    let ld = f.blocks.iter().flat_map(|b| b.insts.iter()).find(|i| i.line == 14).unwrap();
    assert!(!matches!(u.access(&f, ld, 0), Some(ptxr::ir::uniformity::Access::Uniform)), "one access per lane, not one per warp");
}

const WARP_TESTS: &str = "\
.version 6.4
.target sm_70
.address_size 64
.visible .entry w(.param .u64 p)
{
.reg .pred %p<8>;
.reg .b32 %r<8>;
mov.u32 %r1, %tid.x;
setp.gt.u32 %p1, %r1, 31;
setp.gt.u32 %p2, %r1, 30;
setp.lt.u32 %p3, %r1, 64;
setp.ge.s32 %p4, %r1, 48;
setp.le.u32 %p5, %r1, 95;
setp.eq.u32 %p6, %r1, 32;
setp.lt.s32 %p7, %r1, -5;
ret;
}
";

/// A warp of the warp path is 32 consecutive `%tid.x` from a multiple of 32, so a
/// comparison of `%tid.x` with a constant is the same in every lane exactly when no multiple
/// of 32 lies strictly inside the range it splits: `> 31`, `< 64`, `<= 95` are; `> 30`,
/// `>= 48`, `== 32` are not; `< -5` (signed) is false in every lane.
#[test]
fn comparisons_of_tid_x_at_warp_boundaries_are_uniform() {
    let f = func_of(WARP_TESTS);
    let u = analyze(&f);
    assert_eq!(at_line(&f, &u, 9), Shape::Uniform);
    assert_eq!(at_line(&f, &u, 10), Shape::Varying);
    assert_eq!(at_line(&f, &u, 11), Shape::Uniform);
    assert_eq!(at_line(&f, &u, 12), Shape::Varying);
    assert_eq!(at_line(&f, &u, 13), Shape::Uniform);
    assert_eq!(at_line(&f, &u, 14), Shape::Varying);
    assert_eq!(at_line(&f, &u, 15), Shape::Uniform);
}

/// Spin loops on the warp path (`codegen::warp::plan` with the spin loops' labels): a loop
/// every live lane polls (the flag's address is uniform, `%tid.x < 64` splits warps, not
/// lanes) yields at its back edge; a lock each lane retries (`atom.cas` results vary, so the
/// exit is divergent) and a poll inside a branch only some lanes take park their lanes,
/// unless a value computed apart and read after the barrier that follows, or an enclosing
/// loop keep the kernel per thread (with the reason).
#[test]
fn spin_loops_yield_park_or_stay_per_thread() {
    use ptxr::codegen::warp::{plan, Layout};
    const SPIN: &str = "\
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<8>;
.reg .pred %p<4>;
.shared .u32 flag;
mov.u32 %r1, %tid.x;
setp.lt.u32 %p1, %r1, 64;
@%p1 bra WAIT;
st.volatile.shared.u32 [flag], 1;
bra DONE;
WAIT:
ld.volatile.shared.u32 %r2, [flag];
setp.eq.u32 %p2, %r2, 0;
@%p2 bra WAIT;
DONE:
ret;
}
";
    let f = func_of(SPIN);
    let p = plan(&f, Layout::Rows, &["WAIT"], &[]).unwrap();
    let wait = f.blocks.iter().position(|b| b.label == Some("WAIT")).unwrap() as u32;
    assert!(p.yields.iter().any(|(l, _)| *l == wait), "the poll's back edge yields: {:?}", p.yields);
    assert!(p.parks.is_empty());
    // The same poll where lane 0 alone waits: its lanes park, and every block from the loop
    // on is run by no known group of lanes.
    let f = func_of(&SPIN.replace("setp.lt.u32 %p1, %r1, 64;", "setp.eq.u32 %p1, %r1, 0;"));
    let p = plan(&f, Layout::Rows, &["WAIT"], &[]).unwrap();
    assert_eq!(p.parks.iter().map(|(h, _, _)| *h).collect::<Vec<_>>(), vec![wait]);
    let done = f.blocks.iter().position(|b| b.label == Some("DONE")).unwrap();
    assert_eq!(p.uni.group[done], Group::Mixed);
    assert!(p.yields.is_empty());
    // A CTA barrier after the loop: lanes that reach it while others are parked wait there
    // for them (the barrier ends the blocks run apart: a block after it is converged).
    let lane0 = SPIN.replace("setp.lt.u32 %p1, %r1, 64;", "setp.eq.u32 %p1, %r1, 0;");
    let f = func_of(&lane0.replace("DONE:\nret;", "DONE:\nbar.sync 0;\nbra.uni AFTER;\nAFTER:\nret;"));
    let p = plan(&f, Layout::Rows, &["WAIT"], &[]).unwrap();
    let done = f.blocks.iter().position(|b| b.label == Some("DONE")).unwrap();
    let after = f.blocks.iter().position(|b| b.label == Some("AFTER")).unwrap();
    assert_eq!(p.park_barrier, Some((done as u32, 0)));
    assert_eq!(p.uni.group[done], Group::Mixed);
    assert_eq!(p.uni.group[after], Group::All);
    // ... but not a value the lanes compute apart (a load of the flag, the same word for
    // every lane but read at different times) read after the barrier.
    let f = func_of(&lane0.replace("bra DONE;", "ld.volatile.shared.u32 %r2, [flag];\nbra DONE;").replace("DONE:\nret;", "DONE:\nbar.sync 0;\nadd.u32 %r3, %r2, 1;\nret;"));
    let why = plan(&f, Layout::Rows, &["WAIT"], &[]).err().expect("per thread");
    assert!(why.contains("whose lanes compute `%r2` apart, which is read after the barrier that follows"), "{why}");
    // A barrier before the loop, which every lane passes before any parks, is no obstacle.
    let f = func_of(&SPIN.replace("setp.eq.u32 %p1, %r1, 0;", "").replace("setp.lt.u32 %p1, %r1, 64;", "bar.sync 0;\nsetp.eq.u32 %p1, %r1, 0;"));
    assert_eq!(plan(&f, Layout::Rows, &["WAIT"], &[]).unwrap().parks.len(), 1);
    // A lock: each lane retries its own compare-and-swap.
    const LOCK: &str = "\
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<8>;
.reg .pred %p<4>;
.shared .u32 lock;
TRY:
atom.shared.cas.b32 %r1, [lock], 0, 1;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra TRY;
st.volatile.shared.u32 [lock], 0;
ret;
}
";
    let f = func_of(LOCK);
    let p = plan(&f, Layout::Rows, &["TRY"], &[]).unwrap();
    assert_eq!(p.parks.len(), 1);
    // Inside another loop (a lane coming round would meet the parked ones): per thread.
    let f = func_of(&LOCK.replace("TRY:\n", "OUTER:\nTRY:\n").replace("st.volatile.shared.u32 [lock], 0;\n", "st.volatile.shared.u32 [lock], 0;\nadd.u32 %r2, %r2, 1;\nsetp.lt.u32 %p2, %r2, 3;\n@%p2 bra OUTER;\n"));
    let why = plan(&f, Layout::Rows, &["TRY"], &[]).err().expect("per thread");
    assert!(why.contains("spins in loop `TRY`, which lanes may leave at different times, inside another loop that it can come round without a CTA barrier"), "{why}");
    // The same with a barrier on the way round (a persistent kernel's loop over work items).
    let f = func_of(&LOCK.replace("TRY:\n", "OUTER:\nTRY:\n").replace("st.volatile.shared.u32 [lock], 0;\n", "st.volatile.shared.u32 [lock], 0;\nbar.sync 0;\nadd.u32 %r2, %r2, 1;\nsetp.lt.u32 %p2, %r2, 3;\n@%p2 bra OUTER;\n"));
    let p = plan(&f, Layout::Rows, &["TRY"], &[]).unwrap();
    assert_eq!(p.parks.len(), 1);
    assert!(p.park_barrier.is_some());
}

/// `shfl.sync.idx` from lane 0 with c = 31 of a uniform value is uniform (every lane reads
/// lane 0, which every warp has; an inactive source gives a lane its own, the same); from
/// another lane, with segments (c = 0x101f), or
/// of a varying value, it varies. So a branch on the broadcast warp number does not diverge.
#[test]
fn a_broadcast_from_lane_zero_of_a_uniform_value_is_uniform() {
    const K: &str = "\
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<12>;
.reg .pred %p<4>;
mov.u32 %r1, %tid.x;
shr.u32 %r2, %r1, 5;
shfl.sync.idx.b32 %r3, %r2, 0, 31, -1;
shfl.sync.idx.b32 %r4, %r2, 3, 31, -1;
shfl.sync.idx.b32 %r5, %r1, 0, 31, -1;
shfl.sync.idx.b32 %r6, %r2, 0, 0x101f, -1;
setp.lt.u32 %p1, %r3, 4;
@%p1 bra DONE;
add.u32 %r7, %r3, 1;
DONE:
ret;
}
";
    let f = func_of(K);
    let u = analyze(&f);
    assert_eq!(at_line(&f, &u, 10), Shape::Uniform, "lane 0's uniform value");
    assert_eq!(at_line(&f, &u, 11), Shape::Varying, "lane 3, which a partial warp may lack (0 there)");
    assert_eq!(at_line(&f, &u, 12), Shape::Varying, "lane 0 of a varying value: lanes whose source is inactive read their own");
    assert_eq!(at_line(&f, &u, 13), Shape::Varying, "segments");
    assert!(!u.divergent[block_of_line(&f, 14)], "the branch on the broadcast");
}

/// Compare-and-swap retry loops (`lanes::lockstep::is_cas_retry`) are not spin loops: they
/// go round again only when another thread's swap succeeded, so they run on the warp path as
/// divergent loops; nor is a loop whose branch on an atomic only skips work. Loops whose CAS can only succeed after another thread acts (a lock with
/// a constant compare value, a loop that repeats while the swap succeeds, a compare value
/// never renewed or renewed from elsewhere, a second way back) stay spin loops.
#[test]
fn cas_retry_loops_are_not_spin_loops() {
    let spins = |body: &str| -> bool {
        let text = format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\n{body}\nOUT:\nret;\n}}\n"
        );
        let (m, diags) = ptxr::syntax::parse_module(&text);
        assert!(diags.is_empty(), "{text}: {diags:?}");
        let ptxr::syntax::ast::Item::Func(f) = m.items.iter().find(|i| matches!(i, ptxr::syntax::ast::Item::Func(_))).unwrap() else { unreachable!() };
        let found = ptxr::lanes::lockstep::spin_loops_warp(f.body.as_ref().unwrap());
        assert!(found.is_empty() || found == ["L"], "{found:?}");
        !found.is_empty()
    };
    // Retry loops: NVRTC's form (`setp.ne`, then the copy of the old value).
    assert!(!spins("L:\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.ne.s32 %p1, %r3, %r1;\nmov.u32 %r1, %r3;\n@%p1 bra L;"));
    // `setp.eq` and a negated guard; operands in the other order.
    assert!(!spins("L:\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.eq.s32 %p1, %r1, %r3;\nmov.u32 %r1, %r3;\n@!%p1 bra L;"));
    // Leaving on success, then an unconditional way back.
    assert!(!spins("L:\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.eq.s32 %p1, %r3, %r1;\n@%p1 bra OUT;\nmov.u32 %r1, %r3;\nbra L;"));
    // An early exit before the CAS (`while (v > old)`), the float maximum.
    assert!(!spins("L:\nsetp.ge.u32 %p2, %r1, 77;\n@%p2 bra OUT;\natom.global.cas.b32 %r3, [%rd1], %r1, 77;\nsetp.ne.s32 %p1, %r3, %r1;\nmov.u32 %r1, %r3;\n@%p1 bra L;"));
    // The compare value loaded afresh from the CAS's address in every iteration.
    assert!(!spins("L:\nld.volatile.global.u32 %r1, [%rd1];\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.ne.s32 %p1, %r3, %r1;\n@%p1 bra L;"));

    // Spin loops: a lock (constant compare value: only its holder's release ends the wait).
    assert!(spins("L:\natom.global.cas.b32 %r3, [%rd1], 0, 1;\nsetp.ne.s32 %p1, %r3, 0;\n@%p1 bra L;"));
    // Going round while the swap succeeds: waiting for another thread to change the word.
    assert!(spins("L:\natom.global.cas.b32 %r3, [%rd1], %r1, %r1;\nsetp.eq.s32 %p1, %r3, %r1;\nmov.u32 %r1, %r3;\n@%p1 bra L;"));
    // The compare value never renewed (waits for the word to come back to it).
    assert!(spins("L:\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.ne.s32 %p1, %r3, %r1;\n@%p1 bra L;"));
    // Renewed from another register, or loaded from another address.
    assert!(spins("L:\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.ne.s32 %p1, %r3, %r1;\nmov.u32 %r1, %r2;\n@%p1 bra L;"));
    assert!(spins("L:\nld.volatile.global.u32 %r1, [%rd1+4];\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.ne.s32 %p1, %r3, %r1;\n@%p1 bra L;"));
    // The copy before the test (the test then compares equal values).
    assert!(spins("L:\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nmov.u32 %r1, %r3;\nsetp.ne.s32 %p1, %r3, %r1;\n@%p1 bra L;"));
    // A CAS that an iteration may skip (a label between it and the way back).
    assert!(spins("L:\n@%p3 bra M;\natom.global.cas.b32 %r3, [%rd1], %r1, 5;\nsetp.ne.s32 %p1, %r3, %r1;\nM:\nmov.u32 %r1, %r3;\n@%p1 bra L;"));
    // A loop over a node's edges whose `atomicCAS` only decides whether to count: its trip
    // count does not depend on the atomic (a breadth-first search step).
    assert!(!spins("L:\natom.global.cas.b32 %r3, [%rd1], -1, 7;\nsetp.ne.s32 %p1, %r3, -1;\n@%p1 bra SKIP;\natom.global.add.u32 %r4, [%rd1+4], 1;\nSKIP:\nadd.s32 %r1, %r1, 1;\nsetp.lt.s32 %p2, %r1, 9;\n@%p2 bra L;"));
    // ... but a loop that leaves only once a lock was taken, through a flag set under the
    // branch on the CAS (`while (!done) if (atomicCAS(&lock, 0, 1) == 0) { ...; done = 1; }`),
    // or from inside the skipped part, spins.
    assert!(spins("mov.u32 %r5, 0;\nL:\natom.global.cas.b32 %r3, [%rd1], 0, 1;\nsetp.ne.s32 %p1, %r3, 0;\n@%p1 bra SKIP;\natom.global.exch.b32 %r4, [%rd1], 0;\nmov.u32 %r5, 1;\nSKIP:\nsetp.eq.s32 %p2, %r5, 0;\n@%p2 bra L;"));
    assert!(spins("L:\natom.global.cas.b32 %r3, [%rd1], 0, 1;\nsetp.ne.s32 %p1, %r3, 0;\n@%p1 bra SKIP;\natom.global.exch.b32 %r4, [%rd1], 0;\nbra OUT;\nSKIP:\nadd.s32 %r1, %r1, 1;\nbra L;"));
    // A second way back from after the loop.
    assert!(spins("L:\nadd.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd1], %r1, %r2;\nsetp.ne.s32 %p1, %r3, %r1;\nmov.u32 %r1, %r3;\n@%p1 bra L;\nld.volatile.global.u32 %r4, [%rd1+8];\nsetp.eq.s32 %p2, %r4, 0;\n@%p2 bra L;"));
}

/// A compare-and-swap retry loop whose CAS updates one word for the whole warp runs lane by
/// lane to completion (`Plan::serial`, header → its blocks); one on a word per lane runs in
/// warp-wide rounds; one with a warp collective or an inner loop cannot run lane by lane
/// (`Plan::contended_cas`: per thread under `--exec auto`). The CAS instructions are
/// given as the retry-loop detector (`lanes::lockstep::cas_retry_loops`) would find them.
#[test]
fn contended_cas_loops_run_lane_by_lane() {
    use ptxr::codegen::warp::{plan, Layout};
    let kernel = |pre: &str, body: &str| {
        format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n.reg .b64 %rd<6>;\nld.param.u64 %rd1, [p];\nmov.u32 %r5, %tid.x;\nmul.wide.u32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\n{pre}\nld.global.u32 %r1, [%rd2];\nL:\n{body}add.s32 %r2, %r1, 1;\natom.global.cas.b32 %r3, [%rd2], %r1, %r2;\nsetp.ne.s32 %p1, %r3, %r1;\nmov.u32 %r1, %r3;\n@%p1 bra L;\nret;\n}}\n"
        )
    };
    let plan_of = |text: &str| {
        let f = func_of(text);
        let cas: Vec<*const ptxr::syntax::ast::Instr> = f.blocks.iter().flat_map(|b| b.insts.iter()).filter(|i| i.src.opcode.name == "atom" && i.src.has_mod("cas")).map(|i| i.src as *const _).collect();
        let p = plan(&f, Layout::Rows, &[], &cas).unwrap();
        let serial: Vec<String> = p.serial.keys().map(|h| f.blocks[*h as usize].label.unwrap_or("?").to_string()).collect();
        (serial, p.contended_cas)
    };
    // One word for the warp (the parameter's address).
    assert_eq!(plan_of(&kernel("mov.u64 %rd2, %rd1;", "")), (vec!["L".to_string()], None));
    // A word per lane: rounds.
    assert_eq!(plan_of(&kernel("mov.u64 %rd2, %rd4;", "")), (vec![], None));
    // A shuffle in the loop needs the warp's lanes together: not lane by lane (the CAS's line).
    assert_eq!(plan_of(&kernel("mov.u64 %rd2, %rd1;", "shfl.sync.idx.b32 %r6, %r1, 0, 31, -1;\n")), (vec![], Some(18)));
    // An inner loop: not lane by lane.
    assert_eq!(plan_of(&kernel("mov.u64 %rd2, %rd1;", "mov.u32 %r6, 0;\nIN:\nadd.u32 %r6, %r6, 1;\nsetp.lt.u32 %p2, %r6, 4;\n@%p2 bra IN;\n")), (vec![], Some(22)));
}

/// Which grid-stride kernels run in groups of CTAs (`codegen::warp::may_group_ctas`): with
/// shared memory and `bar.sync` of one constant id, yes (a group's warps all wait at that
/// barrier, each CTA in its own shared window); with a second barrier id, a barrier that
/// counts threads, a barrier id in a register, an mbarrier or a warp shuffle, no (those
/// wait per CTA, or need the per-thread version that runs one CTA).
#[test]
fn groups_of_ctas_take_kernels_whose_barriers_are_one() {
    use ptxr::codegen::warp::{may_group_ctas, plan, Layout};
    let kernel = |before: &str, after: &str| {
        format!(
            "\
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{{
.reg .b32 %r<12>;
.reg .b64 %rd<4>;
.reg .pred %p<3>;
.shared .align 8 .b32 bins[64];
.shared .align 8 .b64 mbar;
ld.param.u64 %rd1, [p];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mov.u32 %r3, %ctaid.x;
mov.u32 %r4, %ntid.x;
mov.u32 %r5, %nctaid.x;
mad.lo.u32 %r6, %r3, %r4, %r2;
mul.lo.u32 %r7, %r4, %r5;
{before}
setp.ge.u32 %p1, %r6, %r1;
@%p1 bra DONE;
LOOP:
mul.wide.u32 %rd2, %r6, 4;
add.s64 %rd3, %rd1, %rd2;
ld.global.u32 %r8, [%rd3];
and.b32 %r8, %r8, 252;
mov.u32 %r9, bins;
add.u32 %r9, %r9, %r8;
atom.shared.add.u32 %r10, [%r9], 1;
add.u32 %r6, %r6, %r7;
setp.lt.u32 %p2, %r6, %r1;
@%p2 bra LOOP;
DONE:
{after}
ret;
}}
"
        )
    };
    let groups = |text: &str| {
        let f = func_of(text);
        let p = plan(&f, Layout::Rows, &[], &[]).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert!(!p.yields.is_empty(), "the loop yields: {text}");
        may_group_ctas(&f, &p)
    };
    assert!(groups(&kernel("bar.sync 0;", "bar.sync 0;")));
    assert!(groups(&kernel("barrier.sync.aligned 3;", "bar.sync 3;")));
    assert!(!groups(&kernel("bar.sync 0;", "bar.sync 1;")));
    assert!(!groups(&kernel("bar.sync 0;", "bar.sync 0, 64;")));
    assert!(!groups(&kernel("and.b32 %r11, %r2, 0;\nbar.sync %r11;", "bar.sync 0;")));
    assert!(!groups(&kernel("mov.u32 %r11, mbar;\nmbarrier.init.shared.b64 [%r11], 1;\nbar.sync 0;", "bar.sync 0;")));
    assert!(!groups(&kernel("bar.sync 0;", "shfl.sync.idx.b32 %r11, %r10, 0, 31, -1;\nbar.sync 0;")));
}
