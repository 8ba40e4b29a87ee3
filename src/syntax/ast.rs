//! The PTX abstract syntax tree.
//!
//! Nodes borrow identifiers from the source text (`'a`), so parsing allocates only for lists.
//! Every node that can be named in a diagnostic carries a [`Span`] of byte offsets into the
//! source. Spans are metadata: like `syn`'s syntax trees, two nodes compare equal when their
//! content is equal, wherever they were written, which is what `parse(print(ast)) == ast`
//! needs.

use smallvec::SmallVec;

/// A byte range `start..end` into the source text.
#[derive(Clone, Copy, Debug, Default, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start, end: other.end.max(self.end) }
    }
}

/// A whole PTX module (one `.ptx` file).
#[derive(Clone, Debug, PartialEq)]
pub struct Module<'a> {
    /// `.version MAJOR.MINOR`
    pub version: (u32, u32),
    /// Where the version number is written.
    pub version_span: Span,
    /// `.target` list, e.g. `["sm_70"]` or `["sm_70", "texmode_independent"]`.
    pub target: Vec<&'a str>,
    /// `.address_size 32|64` (64 when absent in the printer's output only if written).
    pub address_size: Option<u32>,
    pub items: Vec<Item<'a>>,
}

/// A module-scope directive.
#[derive(Clone, Debug, PartialEq)]
pub enum Item<'a> {
    Var(VarDecl<'a>),
    Func(Box<Function<'a>>),
    /// `.alias fAlias, fAliasee;` (11.2.3)
    Alias { alias: Ident<'a>, aliasee: Ident<'a>, span: Span },
    /// `.pragma "...";` at module scope (11.4.7)
    Pragma(Vec<&'a str>, Span),
    /// `.file INDEX "name" [, timestamp, size]` (11.5.3)
    File { index: u32, name: &'a str, timestamp: Option<u64>, size: Option<u64>, span: Span },
    /// `.section NAME { dwarf-lines }` (11.5.2), kept as raw text of the body.
    Section { name: &'a str, body: &'a str, span: Span },
    /// `@@DWARF dwarf-string` (11.5.1), the rest of the line.
    Dwarf(&'a str, Span),
}

/// Linking directives (11.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    Extern,
    Visible,
    Weak,
    Common,
}

/// State spaces (5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    Tex,
}

impl StateSpace {
    pub fn as_str(self) -> &'static str {
        match self {
            StateSpace::Reg => "reg",
            StateSpace::Sreg => "sreg",
            StateSpace::Const => "const",
            StateSpace::Global => "global",
            StateSpace::Local => "local",
            StateSpace::Param => "param",
            StateSpace::Shared => "shared",
            StateSpace::Tex => "tex",
        }
    }
    pub fn from_str(s: &str) -> Option<StateSpace> {
        Some(match s {
            "reg" => StateSpace::Reg,
            "sreg" => StateSpace::Sreg,
            "const" => StateSpace::Const,
            "global" => StateSpace::Global,
            "local" => StateSpace::Local,
            "param" => StateSpace::Param,
            "shared" => StateSpace::Shared,
            "tex" => StateSpace::Tex,
            _ => return None,
        })
    }
}

/// Fundamental and opaque types (5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    F32,
    F64,
    Pred,
    TexRef,
    SamplerRef,
    SurfRef,
}

impl Type {
    pub fn from_str(s: &str) -> Option<Type> {
        Some(match s {
            "b8" => Type::B8,
            "b16" => Type::B16,
            "b32" => Type::B32,
            "b64" => Type::B64,
            "b128" => Type::B128,
            "u8" => Type::U8,
            "u16" => Type::U16,
            "u32" => Type::U32,
            "u64" => Type::U64,
            "s8" => Type::S8,
            "s16" => Type::S16,
            "s32" => Type::S32,
            "s64" => Type::S64,
            "f16" => Type::F16,
            "f16x2" => Type::F16x2,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "pred" => Type::Pred,
            "texref" => Type::TexRef,
            "samplerref" => Type::SamplerRef,
            "surfref" => Type::SurfRef,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Type::B8 => "b8",
            Type::B16 => "b16",
            Type::B32 => "b32",
            Type::B64 => "b64",
            Type::B128 => "b128",
            Type::U8 => "u8",
            Type::U16 => "u16",
            Type::U32 => "u32",
            Type::U64 => "u64",
            Type::S8 => "s8",
            Type::S16 => "s16",
            Type::S32 => "s32",
            Type::S64 => "s64",
            Type::F16 => "f16",
            Type::F16x2 => "f16x2",
            Type::F32 => "f32",
            Type::F64 => "f64",
            Type::Pred => "pred",
            Type::TexRef => "texref",
            Type::SamplerRef => "samplerref",
            Type::SurfRef => "surfref",
        }
    }
    /// Size in bytes (predicates count as 1 byte in memory; opaque handles as 8).
    pub fn size(self) -> u32 {
        match self {
            Type::B8 | Type::U8 | Type::S8 | Type::Pred => 1,
            Type::B16 | Type::U16 | Type::S16 | Type::F16 => 2,
            Type::B32 | Type::U32 | Type::S32 | Type::F32 | Type::F16x2 => 4,
            Type::B64 | Type::U64 | Type::S64 | Type::F64 => 8,
            Type::B128 => 16,
            Type::TexRef | Type::SamplerRef | Type::SurfRef => 8,
        }
    }
    pub fn bits(self) -> u32 {
        if self == Type::Pred {
            1
        } else {
            self.size() * 8
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::F16x2 | Type::F32 | Type::F64)
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Type::S8 | Type::S16 | Type::S32 | Type::S64)
    }
    pub fn is_unsigned(self) -> bool {
        matches!(self, Type::U8 | Type::U16 | Type::U32 | Type::U64)
    }
    pub fn is_bits(self) -> bool {
        matches!(self, Type::B8 | Type::B16 | Type::B32 | Type::B64 | Type::B128)
    }
    pub fn is_int(self) -> bool {
        self.is_signed() || self.is_unsigned()
    }
}

/// An identifier as written, with its span. `%tid.x` is `name: "%tid", component: Some('x')`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ident<'a> {
    pub name: &'a str,
    pub span: Span,
}

/// A variable, parameter or register declaration (5.4), e.g. `.reg .b32 %r<10>;`,
/// `.global .align 4 .b8 buf[16] = {1,2};`, `.param .u64 .ptr.global.align 16 p`.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl<'a> {
    pub linkage: Option<Linkage>,
    pub space: StateSpace,
    /// `.const[bank]` (deprecated banked constant space, 5.1.3.1)
    pub bank: Option<u32>,
    pub align: Option<u32>,
    /// `.v2` / `.v4`
    pub vector: Option<u8>,
    pub ty: Type,
    /// Kernel parameter attributes `.ptr [.space] [.align N]` (5.1.6.1).
    pub ptr: Option<PtrAttr<'a>>,
    pub name: Ident<'a>,
    /// `%r<100>`: declares `%r0` .. `%r99`.
    pub range: Option<u32>,
    /// Array dimensions; `None` for an open dimension `[]`.
    pub dims: SmallVec<[Option<u64>; 1]>,
    pub init: Option<Init<'a>>,
    pub span: Span,
}

/// `.ptr` attribute of a kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct PtrAttr<'a> {
    pub space: Option<&'a str>,
    pub align: Option<u32>,
}

/// A variable initializer (5.4.4): an expression or a brace list, nested for arrays.
#[derive(Clone, Debug, PartialEq)]
pub enum Init<'a> {
    Expr(Expr<'a>),
    List(Vec<Init<'a>>, Span),
}

/// Constant expressions (4.6.3) and literals (4.5, 4.6).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr<'a> {
    /// An integer literal; `unsigned` when written with `U` or too large for `.s64`.
    Int { value: u64, unsigned: bool, span: Span },
    /// A double-precision literal (decimal or `0d` hex), as its bits.
    F64 { bits: u64, hex: bool, span: Span },
    /// A `0f` single-precision literal, as its bits.
    F32 { bits: u32, span: Span },
    /// A symbol: variable address, function or label (in initializers and operands).
    Sym(Ident<'a>),
    Unary(UnOp, Box<Expr<'a>>, Span),
    Binary(BinOp, Box<Expr<'a>>, Box<Expr<'a>>, Span),
    Cond(Box<Expr<'a>>, Box<Expr<'a>>, Box<Expr<'a>>, Span),
    /// `generic(var)` in initializers (5.4.4).
    Generic(Ident<'a>, Span),
}

impl<'a> Expr<'a> {
    /// The symbols the expression names (variables, functions, labels; in an operand,
    /// registers too: `r + 1`).
    pub fn symbols(&self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Sym(id) => out.push(id.name),
            Expr::Unary(_, a, _) => a.symbols(out),
            Expr::Binary(_, a, b, _) => {
                a.symbols(out);
                b.symbols(out);
            }
            Expr::Cond(a, b, c, _) => {
                a.symbols(out);
                b.symbols(out);
                c.symbols(out);
            }
            _ => {}
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Expr::Int { span, .. } | Expr::F64 { span, .. } | Expr::F32 { span, .. } => *span,
            Expr::Sym(i) => i.span,
            Expr::Unary(_, _, s) | Expr::Binary(_, _, _, s) | Expr::Cond(_, _, _, s) => *s,
            Expr::Generic(_, s) => *s,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Plus,
    Neg,
    Not,
    Compl,
    CastS64,
    CastU64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Xor,
    Or,
    LAnd,
    LOr,
}

impl BinOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&",
            BinOp::Xor => "^",
            BinOp::Or => "|",
            BinOp::LAnd => "&&",
            BinOp::LOr => "||",
        }
    }
    /// C precedence (Table 4): larger binds tighter.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div | BinOp::Rem => 10,
            BinOp::Add | BinOp::Sub => 9,
            BinOp::Shl | BinOp::Shr => 8,
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => 7,
            BinOp::Eq | BinOp::Ne => 6,
            BinOp::And => 5,
            BinOp::Xor => 4,
            BinOp::Or => 3,
            BinOp::LAnd => 2,
            BinOp::LOr => 1,
        }
    }
}

/// `.entry` or `.func` (11.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Function<'a> {
    pub linkage: Option<Linkage>,
    pub entry: bool,
    pub name: Ident<'a>,
    /// Return parameters of a `.func` (`.param` or `.reg`).
    pub rets: Vec<VarDecl<'a>>,
    pub params: Vec<VarDecl<'a>>,
    /// Performance-tuning directives (11.4) and `.noreturn`, in written order.
    pub perf: Vec<PerfDirective<'a>>,
    /// `None` for a declaration (prototype) without body.
    pub body: Option<Vec<Stmt<'a>>>,
    pub span: Span,
}

/// Performance-tuning directives (11.4).
#[derive(Clone, Debug, PartialEq)]
pub enum PerfDirective<'a> {
    MaxNReg(u32),
    MaxNTid(SmallVec<[u32; 3]>),
    ReqNTid(SmallVec<[u32; 3]>),
    MinNCtaPerSm(u32),
    MaxNCtaPerSm(u32),
    NoReturn,
    Pragma(Vec<&'a str>),
    /// PTX 7.8 cluster directives (sm_90): `.explicitcluster`, `.reqnctapercluster nx{, ny,
    /// nz}`, `.maxclusterrank n`. A launch here is a grid of clusters of one CTA.
    ExplicitCluster,
    ReqNCtaPerCluster(SmallVec<[u32; 3]>),
    MaxClusterRank(u32),
}

/// A statement in a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt<'a> {
    Label(Ident<'a>),
    Instr(Instr<'a>),
    Var(VarDecl<'a>),
    /// `{ ... }` nested scope (9.7.11.1)
    Block(Vec<Stmt<'a>>, Span),
    Pragma(Vec<&'a str>, Span),
    /// `.loc file line col [, rest]` (11.5.4); `rest` keeps newer inlining info verbatim.
    Loc { file: u32, line: u32, col: u32, rest: Option<&'a str>, span: Span },
    /// `label: .callprototype (rets) _ (params) [.noreturn];` (11.3.3)
    CallPrototype { label: Ident<'a>, rets: Vec<VarDecl<'a>>, params: Vec<VarDecl<'a>>, noreturn: bool, span: Span },
    /// `label: .branchtargets a, b, c;` (11.3.1)
    BranchTargets { label: Ident<'a>, targets: Vec<Ident<'a>>, span: Span },
    /// `label: .calltargets f, g;` (11.3.2)
    CallTargets { label: Ident<'a>, targets: Vec<Ident<'a>>, span: Span },
}

/// A guard predicate `@p` / `@!p` (9.7.11.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Guard<'a> {
    pub negated: bool,
    pub pred: Ident<'a>,
}

/// An instruction: `[@[!]p] opcode{.mod} operand, ...;`.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr<'a> {
    pub guard: Option<Guard<'a>>,
    pub opcode: Ident<'a>,
    /// Modifiers without their dot, in written order (`ld.global.v4.f32` → `global v4 f32`).
    pub mods: Vec<&'a str>,
    pub operands: Vec<Operand<'a>>,
    pub span: Span,
}

impl<'a> Instr<'a> {
    pub fn has_mod(&self, m: &str) -> bool {
        self.mods.iter().any(|x| *x == m)
    }
}

/// An operand (6.x).
#[derive(Clone, Debug, PartialEq)]
pub enum Operand<'a> {
    /// A register, variable, label or function name; `%tid.x` keeps `.x` in `component`.
    Name(Ident<'a>, Option<char>),
    /// A literal or a constant expression, possibly over symbols (`arr+4`).
    Imm(Expr<'a>),
    /// `[base]`, `[base+imm]`, `[base+-4]`, `[imm]` (6.4.1).
    Mem(Address<'a>),
    /// `[a, b, ...]`: texture/surface/tensor operand lists.
    MemList(Vec<Operand<'a>>, Span),
    /// `name[index]` array access (4.3 example `array[r1]`).
    Index(Ident<'a>, Box<Operand<'a>>, Span),
    /// `{a, b, c, d}` (6.4.2)
    Vector(Vec<Operand<'a>>, Span),
    /// `d|p`
    Pair(Box<Operand<'a>>, Box<Operand<'a>>),
    /// `!p` as a source operand.
    Not(Ident<'a>),
    /// `_` sink.
    Sink(Span),
    /// `(a, b)` call argument / return lists (9.7.11.5).
    List(Vec<Operand<'a>>, Span),
    /// A register with a video byte/half selector or lane mask: `%r1.b0`, `%r2.h10`.
    Sel(Box<Operand<'a>>, &'a str, Span),
}

impl<'a> Operand<'a> {
    pub fn span(&self) -> Span {
        match self {
            Operand::Name(i, _) => i.span,
            Operand::Imm(e) => e.span(),
            Operand::Mem(a) => a.span,
            Operand::MemList(_, s) | Operand::Index(_, _, s) | Operand::Vector(_, s) => *s,
            Operand::Pair(a, b) => a.span().to(b.span()),
            Operand::Not(i) => i.span,
            Operand::Sink(s) | Operand::List(_, s) | Operand::Sel(_, _, s) => *s,
        }
    }
}

/// An address expression inside brackets.
#[derive(Clone, Debug, PartialEq)]
pub struct Address<'a> {
    /// Register or variable; `None` for an absolute `[imm]`.
    pub base: Option<Ident<'a>>,
    /// Byte offset; for `[imm]`, the address itself.
    pub offset: i64,
    pub span: Span,
}
