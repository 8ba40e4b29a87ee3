//! Bit manipulation and special integer instructions (9.7.1.14-22, 9.7.7.6-7, 9.7.8.6): popc, clz, bfind, fns, brev, bfe, bfi, dp4a, dp2a, sad, lop3, shf, prmt.

use super::func::{FnEmitter, R};
use crate::syntax::ast::Instr;

pub fn emit<'ctx, 'a>(_e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>) -> R<bool> {
    Ok(false)
}
