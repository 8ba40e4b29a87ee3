//! Diagnostics: a span and a message, rendered as `file.ptx:LINE:COL: error: ...` with the
//! source line and a caret. Line and column are computed only when rendering.

use super::ast::Span;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One message about a place in a source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Error, span, message: message.into() }
    }
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, span, message: message.into() }
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders this diagnostic for `file` whose text is `src`.
    pub fn render(&self, file: &str, src: &str) -> String {
        let (line, col, line_text) = line_col(src, self.span.start as usize);
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!("{file}:{line}:{col}: {sev}: {}\n", self.message);
        let shown = line_text.replace('\t', " ");
        let width = (self.span.end.saturating_sub(self.span.start) as usize).clamp(1, shown.len().saturating_sub(col - 1).max(1));
        let _ = writeln!(out, "{:>5} | {}", line, shown);
        let _ = writeln!(out, "      | {}{}", " ".repeat(col - 1), "^".repeat(width));
        out
    }
}

/// 1-based line and column (in characters) of byte `offset`, and the text of that line.
pub fn line_col(src: &str, offset: usize) -> (usize, usize, &str) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
    let col = src[line_start..offset].chars().count() + 1;
    (line, col, src[line_start..line_end].trim_end_matches('\r'))
}

/// Renders all diagnostics of a file.
pub fn render_all(diags: &[Diagnostic], file: &str, src: &str) -> String {
    diags.iter().map(|d| d.render(file, src)).collect()
}
