//! Fuzz target: the whole front end on arbitrary UTF-8 text must not panic or hang:
//! `parse_module`, `validate` (when it parses), rendering the diagnostics, and the printer,
//! whose output must parse back to an equal AST when the input parsed cleanly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptxr::syntax::{diag::render_all, parse_module, printer::print_module, validate::validate};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (m, errs) = parse_module(text);
    let _ = render_all(&errs, "fuzz.ptx", text);
    let verrs = validate(&m);
    let _ = render_all(&verrs, "fuzz.ptx", text);
    let printed = print_module(&m);
    if errs.is_empty() {
        let (m2, errs2) = parse_module(&printed);
        assert!(errs2.is_empty(), "printed text does not parse:\n{}", render_all(&errs2, "printed", &printed));
        assert_eq!(m, m2, "parse(print(ast)) != ast");
    }
});
