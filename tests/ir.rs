//! ptxr's IR (src/ir): built and verified for every corpus file and filetest; the SSA shape
//! of small functions checked by hand (phis at loop headers and joins, guards as branches,
//! scoped registers, undefined reads); the verifier rejects broken IR.

mod common;

use ptxr::ir::{build_module, print_module, verify, Def, Opnd, Term};
use std::path::PathBuf;


use common::ir_of;

#[test]
fn every_corpus_file_and_filetest_builds_and_verifies() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    common::ptx_files(&root.join("tests/corpus"), &mut files);
    common::ptx_files(&root.join("tests/filetests"), &mut files);
    assert!(files.len() > 90);
    let mut nfuncs = 0;
    for f in &files {
        let src = ptxr::SourceFile::load(f).unwrap();
        let Ok(ast) = ptxr::check_source(&src) else { continue };
        let m = build_module(&ast, &src.text).unwrap_or_else(|d| panic!("{}: {d:?}", f.display()));
        for func in &m.funcs {
            verify(func).unwrap_or_else(|e| panic!("{}: {}: {e}", f.display(), func.name));
            nfuncs += 1;
        }
        assert!(!print_module(&m).is_empty());
    }
    assert!(nfuncs > 100, "{nfuncs}");
}

const LOOP: &str = r#"
.version 6.4
.target sm_70
.address_size 64
.visible .entry sum(.param .u64 out, .param .u32 n)
{
	.reg .pred %p<3>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<3>;
	ld.param.u32 %r1, [n];
	mov.u32 %r2, 0;
	mov.u32 %r3, 0;
LOOP:
	setp.ge.u32 %p1, %r3, %r1;
	@%p1 bra DONE;
	add.u32 %r2, %r2, %r3;
	add.u32 %r3, %r3, 1;
	bra.uni LOOP;
DONE:
	setp.eq.u32 %p2, %r2, 0;
	@%p2 add.u32 %r2, %r2, 7;
	{
		.reg .b32 %r1;
		mov.u32 %r1, 5;
		add.u32 %r2, %r2, %r1;
	}
	add.u32 %r4, %r1, %r5;
	ld.param.u64 %rd1, [out];
	st.global.u32 [%rd1], %r4;
	st.global.u32 [%rd1+4], %r2;
	ret;
}
"#;

#[test]
fn loops_and_joins_get_phis_guards_become_branches() {
    let m = ir_of(LOOP);
    let f = &m.funcs[0];
    verify(f).unwrap();
    let text = print_module(&m);
    // The loop header (LOOP) has two predecessors and a phi for each of %r2 and %r3 (both
    // change in the loop); %r1 (n) does not change and gets none.
    let header = f.blocks.iter().position(|b| b.label.as_deref() == Some("LOOP")).unwrap();
    let hb = &f.blocks[header];
    assert_eq!(hb.preds.len(), 2, "{text}");
    let phi_regs: Vec<&str> = hb.phis.iter().map(|p| f.values[p.dst as usize].reg.as_str()).collect();
    assert_eq!(phi_regs.len(), 2, "{text}");
    assert!(phi_regs.contains(&"%r2") && phi_regs.contains(&"%r3"), "{phi_regs:?}\n{text}");
    // `@%p1 bra DONE` is a conditional branch on the value of %p1.
    let Term::CondBr { cond: Opnd::Val(c), .. } = &hb.term else { panic!("{text}") };
    assert_eq!(f.values[*c as usize].reg, "%p1");
    // `@%p2 add` runs in a block of its own; the join after it has a phi for %r2.
    let guarded = f.blocks.iter().filter(|b| b.insts.len() == 1 && b.insts[0].op == "add.u32" && matches!(b.term, Term::Br(_))).count();
    assert!(guarded >= 1, "{text}");
    assert!(f.blocks.iter().any(|b| b.preds.len() == 2 && b.phis.iter().any(|p| f.values[p.dst as usize].reg == "%r2") && b.label.is_none()), "{text}");
    // The inner %r1 is a different variable: the outer %r1 (n) still reaches `add %r4`.
    let add4 = f.blocks.iter().flat_map(|b| b.insts.iter()).find(|i| i.defs.iter().any(|d| f.values[*d as usize].reg == "%r4")).unwrap();
    let Opnd::Val(a) = add4.operands[1] else { panic!() };
    assert_eq!(f.values[a as usize].reg, "%r1");
    assert!(matches!(f.values[a as usize].def, Def::Inst { block: 0, .. }), "{:?}", f.values[a as usize].def);
    assert!(f.values.iter().any(|v| v.reg.starts_with("%r1@")), "{text}");
    // %r5 is read but never written: an undefined value.
    let Opnd::Val(u) = add4.operands[2] else { panic!() };
    assert_eq!(f.values[u as usize].def, Def::Undef);
    // Every value is defined once.
    let defs: usize = f.blocks.iter().map(|b| b.phis.len() + b.insts.iter().map(|i| i.defs.len()).sum::<usize>()).sum();
    let named = f.values.iter().filter(|v| matches!(v.def, Def::Inst { .. } | Def::Phi { .. })).count();
    assert!(defs <= named);
}

#[test]
fn the_verifier_rejects_broken_ir() {
    let mut m = ir_of(LOOP);
    let f = &mut m.funcs[0];
    // Use a value defined later in the same block before its definition.
    let b0 = &mut f.blocks[0];
    let late = *b0.insts.last().unwrap().defs.first().unwrap();
    b0.insts[0].operands.push(Opnd::Val(late));
    let e = verify(f).unwrap_err();
    assert!(e.contains("does not dominate"), "{e}");
    // A branch to a block that does not exist.
    let mut m = ir_of(LOOP);
    let f = &mut m.funcs[0];
    f.blocks[0].term = Term::Br(999);
    assert!(verify(f).unwrap_err().contains("missing bb999"));
    // A phi without an operand for one predecessor.
    let mut m = ir_of(LOOP);
    let f = &mut m.funcs[0];
    let h = f.blocks.iter().position(|b| !b.phis.is_empty()).unwrap();
    f.blocks[h].phis[0].incoming.pop();
    assert!(verify(f).unwrap_err().contains("predecessors"));
}

#[test]
fn emit_ir_on_the_command_line() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptxr"))
        .args(["compile", "--emit", "ir", "tests/corpus/reduce_shared.nvrtc.ptx", "-o", "-"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kernel reduce_sum(") && text.contains(" = phi ") && text.contains("ld.shared") && text.contains("bar.sync"), "{text}");
}

#[test]
fn a_register_in_an_operand_expression_is_a_use() {
    // `st.u64 [x], %t + 1` reads %t: the operand records the value that reaches it.
    let m = ir_of(
        r#"
.version 6.4
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .u64 %t, %a;
	ld.param.u64 %a, [p];
	mov.u64 %t, 5;
	st.global.u64 [%a], %t + 1;
	ret;
}
"#,
    );
    let f = &m.funcs[0];
    verify(f).unwrap();
    let st = f.blocks.iter().flat_map(|b| b.insts.iter()).find(|i| i.op == "st.global.u64").unwrap();
    let Opnd::Expr(text, vals) = &st.operands[1] else { panic!("{:?}", st.operands[1]) };
    assert!(text.contains("%t"), "{text}");
    assert_eq!(vals.len(), 1);
    assert_eq!(f.values[vals[0] as usize].reg, "%t");
    assert!(matches!(f.values[vals[0] as usize].def, Def::Inst { .. }));
}
