//! The uniformity analysis (`ir::uniformity`) on small kernels whose answers are worked by
//! hand from the definitions in its module comment: sources, affine strides, divergent
//! branches, join points, lane groups, temporal divergence at a loop exit.

use ptxr::ir::uniformity::{analyze, Group, Shape, Uniformity};
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
    assert_eq!(at_line(&f, &u, 10), Shape::Affine(1), "%tid.x");
    assert_eq!(at_line(&f, &u, 11), Shape::Uniform, "%ctaid.x");
    assert_eq!(at_line(&f, &u, 12), Shape::Affine(1), "ctaid * n + tid.x");
    assert_eq!(at_line(&f, &u, 13), Shape::Affine(4), "<< 2");
    assert_eq!(at_line(&f, &u, 32), Shape::Affine(4), "mul.wide tid.x, 4");
    assert_eq!(at_line(&f, &u, 33), Shape::Affine(4), "uniform base + 4 * tid.x");
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
    assert_eq!(u.group[l2], Group::Mixed, "a loop with a divergent exit");
    assert_eq!(at_line(&f, &u, 30), Shape::Varying, "read after a divergent loop exit");
}
