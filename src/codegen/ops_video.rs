//! Video instructions (9.7.15, 9.7.16): vadd..vset, vadd2..vset2, vadd4..vset4.

use super::func::{FnEmitter, R};
use crate::syntax::ast::Instr;

pub fn emit<'ctx, 'a>(_e: &mut FnEmitter<'ctx, 'a, '_>, _i: &'a Instr<'a>) -> R<bool> {
    Ok(false)
}
