//! Every corpus file parses, validates, and prints back to text that parses to the same AST.

use ptxr::syntax::{parse_module, printer::print_module, validate::validate};
use std::path::Path;

fn corpus_files() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().map_or(false, |e| e == "ptx")).collect();
    v.sort();
    assert!(v.len() >= 20, "corpus is missing: {}", dir.display());
    v
}

#[test]
fn corpus_parses_validates_and_round_trips() {
    for path in corpus_files() {
        let text: &str = Box::leak(std::fs::read_to_string(&path).unwrap().into_boxed_str());
        let (m, errs) = parse_module(text);
        assert!(errs.is_empty(), "{}: {}", path.display(), ptxr::syntax::diag::render_all(&errs, &path.display().to_string(), text));
        let verrs = validate(&m);
        assert!(verrs.is_empty(), "{}", ptxr::syntax::diag::render_all(&verrs, &path.display().to_string(), text));
        assert!(m.items.iter().any(|i| matches!(i, ptxr::syntax::ast::Item::Func(f) if f.entry)), "{}: no kernel", path.display());
        let printed: &str = Box::leak(print_module(&m).into_boxed_str());
        let (m2, errs2) = parse_module(printed);
        assert!(errs2.is_empty(), "{}: printed text does not parse:\n{}", path.display(), ptxr::syntax::diag::render_all(&errs2, "printed", printed));
        assert_eq!(m, m2, "{}: parse(print(ast)) != ast", path.display());
    }
}
