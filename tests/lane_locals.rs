//! `passes::lane_locals`: which lane arrays become scalars, and which must stay arrays.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::values::AnyValue;

/// Runs the pass on `body` (the blocks of `define void @f(i32 %l, i32 %m, ptr %out)`, with
/// lane arrays `%a` and `%b` allocated in its entry) and returns how many arrays it replaced
/// and the function's text afterwards.
fn run(body: &str) -> (usize, String) {
    let ir = format!(
        "define void @f(i32 %l, i32 %m, ptr %out) {{\nentry:\n  %a = alloca [32 x i32], align 64, !ptxr.lanes !0\n  %b = alloca [32 x i32], align 64, !ptxr.lanes !0\n{body}\n}}\ndeclare void @g(ptr)\n!0 = !{{}}\n"
    );
    let ctx = Context::create();
    let buf = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "t");
    let m = ctx.create_module_from_ir(buf).expect("test IR parses");
    let n = ptxr::passes::lane_locals::scalarize(&m);
    m.verify().expect("the pass leaves valid IR");
    (n, m.get_function("f").unwrap().print_to_string().to_string())
}

#[test]
fn a_value_stored_then_loaded_in_one_block_becomes_a_scalar() {
    let (n, f) = run("  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l
  store i32 7, ptr %p, align 4
  %v = load i32, ptr %p, align 4
  %q = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l
  store i32 %v, ptr %q, align 4
  %w = load i32, ptr %q, align 4
  store i32 %w, ptr %out
  ret void");
    assert_eq!(n, 1, "{f}");
    assert!(!f.contains("%a = alloca [32 x i32]"), "{f}");
    assert!(f.contains("alloca i32"), "{f}");
}

#[test]
fn each_block_may_store_first() {
    // Two blocks, each writing the lane's element before reading it: nothing flows between
    // the runs of the blocks through the array.
    let (n, f) = run("  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l
  store i32 1, ptr %p
  %v = load i32, ptr %p
  br label %next
next:
  store i32 2, ptr %p
  %w = load i32, ptr %p
  %s = add i32 %v, %w
  store i32 %s, ptr %out
  ret void");
    assert_eq!(n, 1, "{f}");
}

#[test]
fn arrays_whose_values_outlive_a_block_stay() {
    // A load before any store in its block reads what an earlier run left.
    let (n, f) = run("  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l
  store i32 1, ptr %p
  br label %next
next:
  %v = load i32, ptr %p
  store i32 %v, ptr %out
  ret void");
    assert_eq!(n, 0, "{f}");
    // Two indices: two lanes' elements.
    let (n, f) = run("  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l
  %q = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %m
  store i32 1, ptr %p
  %v = load i32, ptr %q
  store i32 %v, ptr %out
  ret void");
    assert_eq!(n, 0, "{f}");
    // The whole array read (a warp collective), passed to a call, or accessed volatile.
    for body in [
        "  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l\n  store i32 1, ptr %p\n  %v = load <32 x i32>, ptr %a\n  store <32 x i32> %v, ptr %out\n  ret void",
        "  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l\n  store i32 1, ptr %p\n  call void @g(ptr %p)\n  ret void",
        "  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l\n  store volatile i32 1, ptr %p\n  %v = load i32, ptr %p\n  store i32 %v, ptr %out\n  ret void",
        "  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l\n  store ptr %p, ptr %out\n  ret void",
        "  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l\n  store i64 1, ptr %p\n  %v = load i32, ptr %p\n  store i32 %v, ptr %out\n  ret void",
    ] {
        let (n, f) = run(body);
        assert_eq!(n, 0, "{f}");
    }
}

#[test]
fn only_lane_arrays_are_touched() {
    let ir = "define void @f(i32 %l, ptr %out) {\nentry:\n  %a = alloca [32 x i32], align 64\n  %p = getelementptr inbounds [32 x i32], ptr %a, i32 0, i32 %l\n  store i32 1, ptr %p\n  %v = load i32, ptr %p\n  store i32 %v, ptr %out\n  ret void\n}\n";
    let ctx = Context::create();
    let m = ctx.create_module_from_ir(MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "t")).unwrap();
    assert_eq!(ptxr::passes::lane_locals::scalarize(&m), 0);
}
