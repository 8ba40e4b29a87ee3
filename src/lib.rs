//! ptxr: NVIDIA PTX retargeted to CPUs through LLVM.
//!
//! Pipeline: [`syntax`] (nom parser, AST, validation) → [`ir`] (SSA over a CFG, printed by
//! `--emit ir`, verified) → [`codegen`] (LLVM from the IR, with [`lanes`] for kernels that
//! synchronize) → [`runtime`]; [`roundtrip`] checks the NVPTX direction.

pub mod buildscript;
pub mod capi;
pub mod cudacc;
pub mod codegen;
pub mod driver;
pub mod ir;
pub mod lanes;
/// LLVM-IR passes and pipelines (the top-level `llvm-passes/` directory).
#[path = "../llvm-passes/mod.rs"]
pub mod passes;
pub mod mutate;
pub mod rng;
pub mod roundtrip;
pub mod runtime;
pub mod syntax;
pub mod timing;

pub use buildscript::Build;

use std::path::Path;

/// A PTX source file loaded into memory, with its name for diagnostics.
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn load(path: &Path) -> anyhow::Result<SourceFile> {
        let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
        let text = String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("{}: not UTF-8 text (byte {})", path.display(), e.utf8_error().valid_up_to()))?;
        Ok(SourceFile { name: path.display().to_string(), text })
    }
}

/// Parses and validates `src`; on failure returns all diagnostics rendered as text.
pub fn check_source(src: &SourceFile) -> Result<syntax::ast::Module<'_>, String> {
    let (mut module, mut diags) = syntax::parse_module(&src.text);
    if diags.is_empty() {
        syntax::legacy::apply_legacy_defaults(&mut module);
        diags = syntax::validate::validate(&module);
    }
    if diags.iter().any(|d| d.is_error()) {
        return Err(syntax::diag::render_all(&diags, &src.name, &src.text));
    }
    // Per thread (`--exec thread`, the reference path) code generation inlines these calls
    // itself (`FnEmitter::inline_call`): the pass's oracle in `tests/exec_paths.rs`.
    if codegen::warp::exec() != codegen::warp::Exec::Thread {
        syntax::inline::inline_sync_calls(&mut module);
    }
    syntax::labels::unique_labels(&mut module);
    syntax::vregs::split_vector_registers(&mut module);
    syntax::hints::simplify_qualifiers(&mut module);
    syntax::hints::array_operands(&mut module);
    Ok(module)
}
