//! Half precision (9.7.4, 9.7.6): f16 and f16x2 arithmetic and comparisons.

use super::func::{FnEmitter, R};
use crate::syntax::ast::Instr;

pub fn emit<'ctx, 'a>(_e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>) -> R<bool> {
    Ok(false)
}
