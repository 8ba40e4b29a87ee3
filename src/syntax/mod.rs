//! Front end: the nom parser, the AST, its printer, diagnostics and validation.

pub mod ast;
pub mod diag;
pub mod eval;
pub mod hints;
pub mod inline;
pub mod isa;
pub mod labels;
pub mod legacy;
pub mod lex;
pub mod parser;
pub mod printer;
pub mod validate;
pub mod vregs;

pub use diag::Diagnostic;
pub use parser::parse_module;
