//! Parallel code generation (`codegen::split`): a module compiled as several partitions on
//! several threads behaves as the module compiled in one piece. Expected values are worked by
//! hand from the PTX below.

use ptxr::codegen::split::objects_with;
use ptxr::codegen::target::TargetKind;
use ptxr::runtime::{ArgSpec, Dim3, LaunchConfig, Loaded};
use ptxr::SourceFile;

/// A module whose kernels share a variable (`counter`: one kernel writes it, another reads it,
/// so each partition must refer to the one definition), a constant table (each partition may
/// fold loads from it) and a device function (copied into the partitions that call it).
/// `tag` names the kernels; `init` and `delta` make the modules' variables tell apart.
fn module(tag: &str, init: u32, delta: u32) -> String {
    format!(
        r#"
.version 7.0
.target sm_70
.address_size 64

.global .u32 counter = {init};
.const .align 4 .u32 table[4] = {{10, 20, 30, 40}};

.func (.reg .u32 %out) plus_one(.reg .u32 %in)
{{
    add.u32 %out, %in, 1;
    ret;
}}

.visible .entry bump_{tag}()
{{
    .reg .u32 %r<3>;
    ld.global.u32 %r1, [counter];
    add.u32 %r2, %r1, {delta};
    st.global.u32 [counter], %r2;
    ret;
}}

.visible .entry read_{tag}(.param .u64 out)
{{
    .reg .u32 %r<6>;
    .reg .u64 %rd<3>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.u32 %r1, [counter];
    st.global.u32 [%rd2], %r1;
    ld.const.u32 %r2, [table+8];
    call (%r3), plus_one, (%r2);
    st.global.u32 [%rd2+4], %r3;
    ret;
}}
"#
    )
}

fn one() -> LaunchConfig {
    LaunchConfig { grid: Dim3(1, 1, 1), block: Dim3(1, 1, 1), dyn_smem: 0 }
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Compiles `text` on `jobs` threads, splitting whatever it can; returns the objects and the
/// kernels.
fn compile(name: &str, text: &str, jobs: usize) -> (Vec<Vec<u8>>, Vec<ptxr::codegen::KernelInfo>) {
    let src = SourceFile { name: name.into(), text: text.into() };
    let ctx = inkwell::context::Context::create();
    let c = ptxr::driver::lower(&ctx, &src).expect("the module compiles");
    let objs = objects_with(&c.module, TargetKind::Host, 2, jobs, 1).expect("code generation");
    (objs, c.kernels)
}

fn bump_then_read(l: &Loaded, tag: &str) -> Vec<u32> {
    l.launch(&format!("bump_{tag}"), &one(), &mut []).unwrap();
    let mut args = vec![ArgSpec::Buffer(vec![0; 8])];
    l.launch(&format!("read_{tag}"), &one(), &mut args).unwrap();
    let ArgSpec::Buffer(b) = &args[0] else { unreachable!() };
    u32s(b)
}

#[test]
fn partitions_share_one_definition_of_each_variable() {
    let (objs, kernels) = compile("a.ptx", &module("a", 5, 7), 2);
    assert_eq!(objs.len(), 2, "one partition per kernel");
    let l = Loaded::from_objects(&objs, kernels, "a.ptx").unwrap();
    // counter: 5 + 7 = 12 seen by the other kernel; table[2] + 1 = 31. A second bump: 19.
    assert_eq!(bump_then_read(&l, "a"), vec![12, 31]);
    assert_eq!(bump_then_read(&l, "a"), vec![19, 31]);
}

#[test]
fn one_piece_and_partitions_agree() {
    let (objs, kernels) = compile("a.ptx", &module("a", 5, 7), 1);
    assert_eq!(objs.len(), 1);
    let l = Loaded::from_objects(&objs, kernels, "a.ptx").unwrap();
    assert_eq!(bump_then_read(&l, "a"), vec![12, 31]);
}

#[test]
fn two_split_modules_link_into_one_library_without_clashes() {
    // Both modules have internal variables and functions of the same names; their partitions
    // are linked into one shared library, where each module must keep its own.
    let (mut objs, mut kernels) = compile("a.ptx", &module("a", 5, 7), 2);
    let (objs_b, kernels_b) = compile("b.ptx", &module("b", 9, 2), 2);
    assert_eq!(objs_b.len(), 2);
    objs.extend(objs_b);
    kernels.extend(kernels_b);
    let l = Loaded::from_objects(&objs, kernels, "ab.ptx").unwrap();
    assert_eq!(bump_then_read(&l, "a"), vec![12, 31]);
    assert_eq!(bump_then_read(&l, "b"), vec![11, 31]);
    assert_eq!(bump_then_read(&l, "a"), vec![19, 31]);
}

/// A kernel with a warp collective runs on the warp path, and in blocks whose rows are not
/// warps in its per-thread version, which is `optnone` and compiled in a partition of its own
/// (code generated at -O0). Each thread writes the sum of the linear thread indices of its
/// hardware warp (32 consecutive linear indices): 0 + ... + 31 = 496 for the first warp and
/// 32 + ... + 63 = 1520 for the second.
#[test]
fn per_thread_fallback_in_its_own_partition() {
    let text = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry warp_sum(.param .u64 out)
{
    .reg .u32 %r<12>;
    .reg .u64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mov.u32 %r6, %r4;
    shfl.sync.bfly.b32 %r5, %r6, 16, 31, -1;
    add.u32 %r6, %r6, %r5;
    shfl.sync.bfly.b32 %r5, %r6, 8, 31, -1;
    add.u32 %r6, %r6, %r5;
    shfl.sync.bfly.b32 %r5, %r6, 4, 31, -1;
    add.u32 %r6, %r6, %r5;
    shfl.sync.bfly.b32 %r5, %r6, 2, 31, -1;
    add.u32 %r6, %r6, %r5;
    shfl.sync.bfly.b32 %r5, %r6, 1, 31, -1;
    add.u32 %r6, %r6, %r5;
    mul.wide.u32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;
}
"#;
    let (objs, kernels) = compile("w.ptx", text, 2);
    assert_eq!(objs.len(), 3, "the warp version, its version for narrow blocks and its per-thread fallback, apart");
    let l = Loaded::from_objects(&objs, kernels, "w.ptx").unwrap();
    let want: Vec<u32> = (0..64).map(|t| if t < 32 { 496 } else { 1520 }).collect();
    // (64, 1): rows are warps (the warp version); (16, 4): warps are pairs of rows (the
    // version for narrow blocks); (8, 8): neither (the fallback).
    for block in [Dim3(64, 1, 1), Dim3(16, 4, 1), Dim3(8, 8, 1)] {
        let mut args = vec![ArgSpec::Buffer(vec![0; 256])];
        l.launch("warp_sum", &LaunchConfig { grid: Dim3(1, 1, 1), block, dyn_smem: 0 }, &mut args).unwrap();
        let ArgSpec::Buffer(b) = &args[0] else { unreachable!() };
        assert_eq!(u32s(b), want, "block {block:?}");
    }
}
