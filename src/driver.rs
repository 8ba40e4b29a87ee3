//! The pipeline chained in one place: parse → validate → codegen → optimize → emit/load.

use crate::codegen::target::{self, TargetKind};
use crate::runtime::Loaded;
use crate::SourceFile;
use anyhow::{anyhow, Result};
use inkwell::context::Context;
use std::path::Path;

/// What `ptxr compile` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Obj,
    Asm,
    LlvmIr,
    StaticLib,
}

impl Emit {
    pub fn parse(s: &str) -> Option<Emit> {
        Some(match s {
            "obj" => Emit::Obj,
            "asm" => Emit::Asm,
            "llvm-ir" => Emit::LlvmIr,
            "staticlib" => Emit::StaticLib,
            _ => return None,
        })
    }
}

/// Parses, validates and lowers `src` into an LLVM module in `ctx`.
pub fn lower<'ctx>(ctx: &'ctx Context, src: &SourceFile) -> Result<crate::codegen::Compiled<'ctx>> {
    let module = crate::check_source(src).map_err(|m| anyhow!("{}", m.trim_end()))?;
    crate::codegen::compile(ctx, &module, &src.text, &src.name).map_err(|d| anyhow!("{}", crate::syntax::diag::render_all(&d, &src.name, &src.text).trim_end()))
}

/// Compiles `src` for `kind` at `opt` and writes `emit` to `out`.
pub fn compile_to_file(src: &SourceFile, kind: TargetKind, opt: u32, emit: Emit, out: &Path) -> Result<()> {
    let ctx = Context::create();
    let c = lower(&ctx, src)?;
    let tm = target::machine(kind, opt, "sm_70")?;
    target::optimize(&c.module, &tm, opt)?;
    match emit {
        Emit::LlvmIr => c.module.print_to_file(out).map_err(|e| anyhow!("cannot write {}: {}", out.display(), e.to_string())),
        Emit::Asm => target::write_asm(&c.module, &tm, out),
        Emit::Obj => target::write_object(&c.module, &tm, out),
        Emit::StaticLib => {
            let dir = tempfile::tempdir()?;
            let o = dir.path().join("kernels.o");
            target::write_object(&c.module, &tm, &o)?;
            let _ = std::fs::remove_file(out);
            let st = std::process::Command::new("ar").arg("crs").arg(out).arg(&o).status().map_err(|e| anyhow!("cannot run `ar`: {e}"))?;
            if !st.success() {
                anyhow::bail!("`ar` failed to write {}", out.display());
            }
            Ok(())
        }
    }
}

/// Compiles `src` for the host and loads it for launching.
pub fn load(src: &SourceFile, opt: u32) -> Result<Loaded> {
    let ctx = Context::create();
    let c = lower(&ctx, src)?;
    let tm = target::machine(TargetKind::Host, opt, "sm_70")?;
    target::optimize(&c.module, &tm, opt)?;
    let buf = tm.write_to_memory_buffer(&c.module, inkwell::targets::FileType::Object).map_err(|e| anyhow!("code generation failed: {e}"))?;
    Loaded::from_object(buf.as_slice(), c.kernels, &src.name)
}
