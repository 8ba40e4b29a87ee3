//! Atomics (9.7.12.4 atom, 9.7.12.5 red) on global, shared and generic addresses.

use super::func::{FnEmitter, R};
use crate::syntax::ast::Instr;

pub fn emit<'ctx, 'a>(_e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>) -> R<bool> {
    Ok(false)
}
