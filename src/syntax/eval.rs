//! Constant expression evaluation with the typing rules of PTX ISA 4.6.4 / Table 5:
//! 64-bit integers that are signed (`.s64`) or unsigned (`.u64`), and `.f64`.

use super::ast::{BinOp, Expr, Span, UnOp};

/// The value of a constant expression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    S64(i64),
    U64(u64),
    F64(f64),
    /// A `0f` literal keeps its exact single-precision value (4.6.1).
    F32(f32),
}

impl Const {
    pub fn as_u64(self) -> u64 {
        match self {
            Const::S64(v) => v as u64,
            Const::U64(v) => v,
            Const::F64(v) => v as i64 as u64,
            Const::F32(v) => v as i64 as u64,
        }
    }
    pub fn is_int(self) -> bool {
        matches!(self, Const::S64(_) | Const::U64(_))
    }
}

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub span: Span,
    pub msg: String,
}

/// Evaluates `e`; `sym` resolves symbols (returns `None` for unknown or non-constant names).
pub fn eval(e: &Expr, sym: &dyn Fn(&str) -> Option<Const>) -> Result<Const, EvalError> {
    let err = |span: Span, msg: &str| EvalError { span, msg: msg.to_string() };
    Ok(match e {
        Expr::Int { value, unsigned, .. } => {
            if *unsigned {
                Const::U64(*value)
            } else {
                Const::S64(*value as i64)
            }
        }
        Expr::F64 { bits, .. } => Const::F64(f64::from_bits(*bits)),
        Expr::F32 { bits, .. } => Const::F32(f32::from_bits(*bits)),
        Expr::Sym(id) => {
            if id.name == "WARP_SZ" {
                Const::S64(32)
            } else {
                sym(id.name).ok_or_else(|| err(id.span, &format!("`{}` is not a constant", id.name)))?
            }
        }
        Expr::Generic(id, span) => sym(id.name).ok_or_else(|| err(*span, &format!("`generic({})` is not a constant here", id.name)))?,
        Expr::Unary(op, a, span) => {
            let a = eval(a, sym)?;
            match (op, a) {
                (UnOp::Plus, v) => v,
                (UnOp::Neg, Const::S64(v)) => Const::S64(v.wrapping_neg()),
                (UnOp::Neg, Const::U64(v)) => Const::U64(v.wrapping_neg()),
                (UnOp::Neg, Const::F64(v)) => Const::F64(-v),
                (UnOp::Neg, Const::F32(v)) => Const::F32(-v),
                (UnOp::Not, Const::S64(v)) => Const::S64((v == 0) as i64),
                (UnOp::Not, Const::U64(v)) => Const::S64((v == 0) as i64),
                (UnOp::Compl, Const::S64(v)) => Const::U64(!(v as u64)),
                (UnOp::Compl, Const::U64(v)) => Const::U64(!v),
                (UnOp::CastS64, c) if c.is_int() => Const::S64(c.as_u64() as i64),
                (UnOp::CastU64, c) if c.is_int() => Const::U64(c.as_u64()),
                _ => return Err(err(*span, "operator needs an integer operand")),
            }
        }
        Expr::Binary(op, a, b, span) => {
            let a = eval(a, sym)?;
            let b = eval(b, sym)?;
            binary(*op, a, b).ok_or_else(|| err(*span, "invalid operands for constant expression (division by zero, or float where an integer is needed)"))?
        }
        Expr::Cond(c, a, b, span) => {
            let c = eval(c, sym)?;
            if !c.is_int() {
                return Err(err(*span, "condition of `?:` must be an integer"));
            }
            let a = eval(a, sym)?;
            let b = eval(b, sym)?;
            let (a, b) = match (a, b) {
                (Const::S64(_), Const::S64(_)) | (Const::U64(_), Const::U64(_)) | (Const::F64(_), Const::F64(_)) => (a, b),
                (x, y) if x.is_int() && y.is_int() => (Const::U64(x.as_u64()), Const::U64(y.as_u64())),
                _ => return Err(err(*span, "branches of `?:` must both be integers or both floating-point")),
            };
            if c.as_u64() != 0 {
                a
            } else {
                b
            }
        }
    })
}

fn binary(op: BinOp, a: Const, b: Const) -> Option<Const> {
    use Const::*;
    let f = |c: Const| match c {
        F64(v) => Some(v),
        _ => None,
    };
    if !a.is_int() || !b.is_int() {
        let (x, y) = (f(a)?, f(b)?);
        return Some(match op {
            BinOp::Add => F64(x + y),
            BinOp::Sub => F64(x - y),
            BinOp::Mul => F64(x * y),
            BinOp::Div => F64(x / y),
            BinOp::Lt => S64((x < y) as i64),
            BinOp::Gt => S64((x > y) as i64),
            BinOp::Le => S64((x <= y) as i64),
            BinOp::Ge => S64((x >= y) as i64),
            BinOp::Eq => S64((x == y) as i64),
            BinOp::Ne => S64((x != y) as i64),
            _ => return None,
        });
    }
    let unsigned = matches!(a, U64(_)) || matches!(b, U64(_));
    let (x, y) = (a.as_u64(), b.as_u64());
    let wrap = |v: u64| if unsigned { U64(v) } else { S64(v as i64) };
    Some(match op {
        BinOp::Add => wrap(x.wrapping_add(y)),
        BinOp::Sub => wrap(x.wrapping_sub(y)),
        BinOp::Mul => wrap(x.wrapping_mul(y)),
        BinOp::Div => {
            if y == 0 {
                return None;
            }
            if unsigned {
                U64(x / y)
            } else {
                S64((x as i64).wrapping_div(y as i64))
            }
        }
        // Remainder interprets both operands as .u64 (4.6.4); Table 5 gives a .s64 result.
        BinOp::Rem => {
            if y == 0 {
                return None;
            }
            S64((x % y) as i64)
        }
        BinOp::Shl => {
            let v = if y >= 64 { 0 } else { x << y };
            if matches!(a, U64(_)) {
                U64(v)
            } else {
                S64(v as i64)
            }
        }
        BinOp::Shr => match a {
            U64(_) => U64(if y >= 64 { 0 } else { x >> y }),
            _ => S64((x as i64) >> y.min(63)),
        },
        BinOp::Lt => S64(if unsigned { x < y } else { (x as i64) < (y as i64) } as i64),
        BinOp::Gt => S64(if unsigned { x > y } else { (x as i64) > (y as i64) } as i64),
        BinOp::Le => S64(if unsigned { x <= y } else { (x as i64) <= (y as i64) } as i64),
        BinOp::Ge => S64(if unsigned { x >= y } else { (x as i64) >= (y as i64) } as i64),
        BinOp::Eq => S64((x == y) as i64),
        BinOp::Ne => S64((x != y) as i64),
        BinOp::And => wrap(x & y),
        BinOp::Xor => wrap(x ^ y),
        BinOp::Or => wrap(x | y),
        BinOp::LAnd => S64((x != 0 && y != 0) as i64),
        BinOp::LOr => S64((x != 0 || y != 0) as i64),
    })
}
