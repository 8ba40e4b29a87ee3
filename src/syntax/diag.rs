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
        self.render_at(file, line_col(src, self.span.start as usize))
    }

    fn render_at(&self, file: &str, (line, col, line_text): (usize, usize, &str)) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!("{file}:{line}:{col}: {sev}: {}\n", self.message);
        // Show at most WINDOW characters of a long line, around the column. Control characters
        // are shown as spaces so the caret stays aligned.
        const WINDOW: usize = 160;
        let skip = (col - 1).saturating_sub(WINDOW / 2);
        let shown: String = line_text.chars().skip(skip).take(WINDOW).map(|c| if c.is_control() { ' ' } else { c }).collect();
        let shown_len = shown.chars().count();
        let col_in = col - 1 - skip;
        let width = (self.span.end.saturating_sub(self.span.start) as usize).clamp(1, shown_len.saturating_sub(col_in).max(1));
        let _ = writeln!(out, "{:>5} | {}", line, shown.trim_end());
        let _ = writeln!(out, "      | {}{}", " ".repeat(col_in), "^".repeat(width));
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

/// The starts of a text's lines, for line numbers of many offsets (binary search instead of
/// [`line_col`]'s scan from the start of the text).
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(src: &str) -> LineIndex {
        let mut starts = vec![0usize];
        starts.extend(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The 0-based line of byte `offset` and the offset where that line starts.
    fn locate(&self, offset: usize) -> (usize, usize) {
        let idx = self.starts.partition_point(|&s| s <= offset) - 1;
        (idx, self.starts[idx])
    }

    /// The 1-based line of byte `offset`.
    pub fn line(&self, offset: usize) -> usize {
        self.locate(offset).0 + 1
    }

    /// The 1-based column (in bytes) of byte `offset`.
    pub fn column(&self, offset: usize) -> usize {
        offset - self.locate(offset).1 + 1
    }
}

/// Renders all diagnostics of a file. Line starts are found once, so this is linear in the
/// file size plus the output, however many diagnostics there are.
pub fn render_all(diags: &[Diagnostic], file: &str, src: &str) -> String {
    if diags.len() <= 1 {
        return diags.iter().map(|d| d.render(file, src)).collect();
    }
    let lines = LineIndex::new(src);
    let mut out: String = diags
        .iter()
        .take(MAX_RENDERED)
        .map(|d| {
            let offset = (d.span.start as usize).min(src.len());
            let (idx, line_start) = lines.locate(offset);
            let line_end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
            let col = src[line_start..offset].chars().count() + 1;
            d.render_at(file, (idx + 1, col, src[line_start..line_end].trim_end_matches('\r')))
        })
        .collect();
    if diags.len() > MAX_RENDERED {
        out += &format!("{file}: {} more errors not shown (the first {MAX_RENDERED} are above)\n", diags.len() - MAX_RENDERED);
    }
    out
}

/// Diagnostics [`render_all`] shows before it counts the rest: one mistake (a lost brace, a
/// misspelt declaration) can make every later line an error, and thousands of them bury the
/// first, which is the one to fix.
pub const MAX_RENDERED: usize = 50;

#[cfg(test)]
mod tests {
    use super::{line_col, LineIndex};

    /// The line index gives every byte offset the line that counting the newlines before it
    /// gives (empty lines, CRLF, multi-byte characters, a last line without a newline, the
    /// end of the text).
    #[test]
    fn line_index_agrees_with_counting_newlines() {
        let src = "a\n\nbc\r\nd\u{e9}f\n  \u{3b1}\u{3b2}\nlast";
        let idx = LineIndex::new(src);
        for off in 0..=src.len() {
            let counted = src.as_bytes()[..off].iter().filter(|&&b| b == b'\n').count() + 1;
            assert_eq!(idx.line(off), counted, "offset {off}");
            if src.is_char_boundary(off) {
                assert_eq!(line_col(src, off).0, counted, "offset {off}");
            }
        }
        assert_eq!(idx.line(0), 1);
        assert_eq!(idx.line(src.len()), 6);
    }
}
