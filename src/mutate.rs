//! Structural mutations of PTX text for whole-pipeline fuzzing (`tests/pipeline_fuzz.rs`,
//! `fuzz/fuzz_targets/pipeline.rs`): each mutant changes a corpus file the way a wrong
//! compiler, a hand edit or a truncated download would — a type, a state space, an opcode,
//! a modifier, an operand, a whole line, a brace — so that it mostly still parses and reaches
//! validation, code generation and a launch, where crashes hide.

use crate::rng::Rng;

const TYPES: &[&str] = &[
    ".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".f32", ".f64", ".pred",
];
const SPACES: &[&str] = &[".global", ".shared", ".local", ".param", ".const", ".reg"];
const OPCODES: &[&str] = &[
    "add", "sub", "mul", "mad", "div", "rem", "min", "max", "and", "or", "xor", "not", "shl", "shr", "mov", "ld", "st", "cvt", "cvta", "setp", "selp", "bra", "ret", "exit",
    "atom", "red", "bar", "shfl.sync", "vote.sync", "fma", "rcp", "sqrt", "ex2", "lg2", "abs", "neg", "popc", "clz", "brev", "bfe", "bfi", "prmt", "call", "trap",
];
const MODIFIERS: &[&str] = &[
    ".rn", ".rz", ".rm", ".rp", ".ftz", ".sat", ".approx", ".full", ".lo", ".hi", ".wide", ".cc", ".v2", ".v4", ".volatile", ".uni", ".sync", ".aligned", ".eq",
    ".lt", ".ge", ".and", ".add", ".rni", ".rzi", ".to",
];
const OPERANDS: &[&str] = &["0", "1", "-1", "0x7fffffff", "4294967295", "0f7FC00000", "_", "%tid.x", "%laneid", "[%rd1]", "[%rd1+4]", "{%r1, %r2}", "%p1", "%r1", "%rd1", "%f1"];

/// One to four structural mutations of `text`.
pub fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.range(0, 4) {
        if lines.is_empty() {
            break;
        }
        let n = lines.len() as i64;
        let k = rng.range(0, n) as usize;
        match rng.range(0, 9) {
            0 => replace_from(&mut lines[k], TYPES, rng),
            1 => replace_from(&mut lines[k], SPACES, rng),
            2 => replace_opcode(&mut lines[k], rng),
            3 => drop_or_add_modifier(&mut lines[k], rng),
            4 => replace_operand(&mut lines[k], rng),
            5 => {
                lines.remove(k);
            }
            6 => {
                let l = lines[k].clone();
                lines.insert(k, l);
            }
            7 => {
                let j = rng.range(0, n) as usize;
                lines.swap(k, j);
            }
            _ => {
                // A brace more or less.
                if let Some(p) = lines[k].find(['{', '}']) {
                    lines[k].remove(p);
                } else {
                    lines[k].push_str(if rng.range(0, 2) == 0 { " {" } else { " }" });
                }
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Replaces one occurrence in `line` of a word of `set` (a whole token) by another of `set`.
fn replace_from(line: &mut String, set: &[&str], rng: &mut Rng) {
    let found: Vec<(usize, &str)> = set.iter().flat_map(|w| token_positions(line, w).into_iter().map(move |p| (p, *w))).collect();
    if found.is_empty() {
        return;
    }
    let (at, w) = found[rng.range(0, found.len() as i64) as usize];
    let by = set[rng.range(0, set.len() as i64) as usize];
    line.replace_range(at..at + w.len(), by);
}

/// Where `w` stands in `line` as a token (not followed by a letter or digit).
fn token_positions(line: &str, w: &str) -> Vec<usize> {
    line.match_indices(w).filter(|(p, _)| !line[p + w.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')).map(|(p, _)| p).collect()
}

/// The instruction word of an instruction line: its start and end (after a guard).
fn opcode_span(line: &str) -> Option<(usize, usize)> {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with(['.', '/', '{', '}', '$']) || t.ends_with(':') {
        return None;
    }
    let mut start = line.len() - t.len();
    if t.starts_with('@') {
        let sp = line[start..].find(char::is_whitespace)?;
        start += sp;
        start += line[start..].len() - line[start..].trim_start().len();
    }
    let end = start + line[start..].find(|c: char| c.is_whitespace() || c == ';').unwrap_or(line.len() - start);
    Some((start, end))
}

fn replace_opcode(line: &mut String, rng: &mut Rng) {
    let Some((s, e)) = opcode_span(line) else { return };
    let word = &line[s..e];
    let base_end = word.find('.').unwrap_or(word.len());
    let by = OPCODES[rng.range(0, OPCODES.len() as i64) as usize];
    line.replace_range(s..s + base_end, by);
}

fn drop_or_add_modifier(line: &mut String, rng: &mut Rng) {
    let Some((s, e)) = opcode_span(line) else { return };
    let word = line[s..e].to_string();
    let dots: Vec<usize> = word.match_indices('.').map(|(p, _)| p).collect();
    if !dots.is_empty() && rng.range(0, 2) == 0 {
        let d = dots[rng.range(0, dots.len() as i64) as usize];
        let end = word[d + 1..].find('.').map_or(word.len(), |q| d + 1 + q);
        line.replace_range(s + d..s + end, "");
    } else {
        let m = MODIFIERS[rng.range(0, MODIFIERS.len() as i64) as usize];
        let at = s + dots.get(rng.range(0, dots.len() as i64 + 1) as usize).copied().unwrap_or(word.len());
        line.insert_str(at, m);
    }
}

fn replace_operand(line: &mut String, rng: &mut Rng) {
    let Some((_, e)) = opcode_span(line) else { return };
    let rest = &line[e..];
    let Some(semi) = rest.rfind(';') else { return };
    let ops: Vec<(usize, usize)> = {
        let mut v = Vec::new();
        let mut depth = 0i32;
        let mut start = 0;
        for (i, c) in rest[..semi].char_indices() {
            match c {
                '{' | '[' | '(' => depth += 1,
                '}' | ']' | ')' => depth -= 1,
                ',' if depth == 0 => {
                    v.push((start, i));
                    start = i + 1;
                }
                _ => {}
            }
        }
        v.push((start, semi));
        v
    };
    let (a, b) = ops[rng.range(0, ops.len() as i64) as usize];
    if ops.len() >= 2 && rng.range(0, 3) == 0 {
        // Two operands trade places.
        let (c, d) = ops[rng.range(0, ops.len() as i64) as usize];
        let (x, y) = (rest[a..b].trim().to_string(), rest[c..d].trim().to_string());
        if (a, b) != (c, d) {
            let mut parts: Vec<String> = ops.iter().map(|(p, q)| rest[*p..*q].trim().to_string()).collect();
            let (i, j) = (ops.iter().position(|o| *o == (a, b)).unwrap(), ops.iter().position(|o| *o == (c, d)).unwrap());
            parts[i] = y;
            parts[j] = x;
            let new = format!(" {}{}", parts.join(", "), &rest[semi..]);
            line.replace_range(e.., &new);
        }
        return;
    }
    let by = OPERANDS[rng.range(0, OPERANDS.len() as i64) as usize];
    line.replace_range(e + a..e + b, &format!(" {by}"));
}
