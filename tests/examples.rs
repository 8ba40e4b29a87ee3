//! Builds and runs the examples: `examples/rust-build` (a cargo project whose build.rs uses
//! `ptxr::Build`) and `examples/c` (the C ABI, natively and for AArch64 under qemu); and checks
//! `ptxr::Build`'s error reports.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The main target directory (the examples build under it, so later runs reuse their builds).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().to_path_buf()
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed ({}):\n{text}", out.status);
    text
}

fn have(tool: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().map_or(false, |o| o.status.success())
}

#[test]
fn rust_build_example() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = run(Command::new(cargo)
        .args(["run", "--release", "--manifest-path"])
        .arg(root().join("examples/rust-build/Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir().join("examples"))
        .current_dir(root()));
    assert!(out.contains("rust example: all kernels match the references"), "{out}");
    // Issue 22: the application carries the runtime, not the compiler.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let tree = run(Command::new(cargo).args(["tree", "-e", "normal", "--manifest-path"]).arg(root().join("examples/rust-build/Cargo.toml")).env("CARGO_TARGET_DIR", target_dir().join("examples")).current_dir(root()));
    assert!(tree.contains("ptxr-runtime"), "{tree}");
    for dep in ["inkwell", "llvm-sys", "ptxr v"] {
        assert!(!tree.contains(dep), "the example depends on {dep}:\n{tree}");
    }
    let exe = target_dir().join("examples/release/ptxr-rust-build-example");
    let size = std::fs::metadata(&exe).map(|m| m.len()).unwrap_or(0);
    eprintln!("rust example binary: {size} bytes");
    if have("nm") {
        let syms = run(Command::new("nm").arg("-C").arg(&exe));
        assert!(!syms.contains("llvm::"), "LLVM symbols in the example binary");
    }
    if have("ldd") {
        let libs = run(Command::new("ldd").arg(&exe));
        assert!(!libs.contains("libstdc++") && !libs.contains("libLLVM"), "{libs}");
    }
}

fn c_example(what: &str) {
    let out = run(Command::new("bash")
        .arg(root().join("examples/c/build.sh"))
        .arg(what)
        .env("PTXR", env!("CARGO_BIN_EXE_ptxr"))
        .env("OUT", target_dir().join("examples/c")));
    assert!(out.contains("c example: all kernels match the references"), "{out}");
}

#[test]
fn c_example_native() {
    c_example("native");
}

#[test]
fn c_example_aarch64_qemu() {
    if !have("aarch64-linux-gnu-gcc") || !have("qemu-aarch64") {
        println!("skipping the AArch64 C example: aarch64-linux-gnu-gcc or qemu-aarch64 is missing");
        return;
    }
    c_example("aarch64");
}

fn build_in(dir: &Path) -> ptxr::Build {
    let mut b = ptxr::Build::new();
    b.out_dir(dir).cargo_metadata(false).target("host").opt_level(1);
    b
}

#[test]
fn build_reports_bad_ptx_with_position() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.ptx");
    std::fs::write(&f, ".version 6.4\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n  frobnicate.u32 %r1;\n}\n").unwrap();
    let e = build_in(dir.path()).file(&f).try_compile("bad").unwrap_err().to_string();
    assert!(e.contains(&format!("{}:6:", f.display())), "{e}");
    let p = std::panic::catch_unwind(|| build_in(dir.path()).file(&f).compile("bad")).unwrap_err();
    let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("ptxr::Build failed") && msg.contains("bad.ptx:6:"), "{msg}");
}

#[test]
fn build_reports_duplicate_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let a = root().join("examples/rust-build/kernels/saxpy.ptx");
    let b = dir.path().join("saxpy_copy.ptx");
    std::fs::copy(&a, &b).unwrap();
    let e = build_in(dir.path()).file(&a).file(&b).try_compile("dup").unwrap_err().to_string();
    assert!(e.contains("kernel `saxpy` is defined in both") && e.contains("saxpy_copy.ptx"), "{e}");
}

/// `Build::check(true)`: the kernels are compiled for the checking mode (they call the
/// runtime's check before each access), the library exports the module variables' addresses,
/// and the bindings launch with an allocation list (the launch itself runs in
/// examples/rust-build, `rust_build_example`).
#[test]
fn build_check_mode_bindings_and_variables() {
    let dir = tempfile::tempdir().unwrap();
    let o = build_in(dir.path()).file(root().join("tests/cli/check.ptx")).buffers(true).check(true).c_abi(false).try_compile("chk").unwrap();
    let rs = std::fs::read_to_string(o.bindings.unwrap()).unwrap();
    assert!(rs.contains("#[link_name = \"__ptxr_var.table\"]") && rs.contains("(\"table\", unsafe { __PTXR_VAR_0 } as u64, 32)"), "{rs}");
    assert!(rs.contains("::ptxr_runtime::check::with_check(list, ||") && rs.contains("::ptxr_runtime::check::with_check_raw("), "{rs}");
    if have("nm") {
        let syms = run(Command::new("nm").arg(&o.lib));
        assert!(syms.contains("__ptxr_var.table"), "{syms}");
    }
    // Without the checking mode: no exported variables, plain launches.
    let plain = build_in(dir.path()).file(root().join("tests/cli/check.ptx")).buffers(true).c_abi(false).try_compile("plain").unwrap();
    let rs = std::fs::read_to_string(plain.bindings.unwrap()).unwrap();
    assert!(!rs.contains("__ptxr_var") && !rs.contains("with_check"), "{rs}");
    // Two files defining one variable cannot both export its address.
    let copy = dir.path().join("check_copy.ptx");
    std::fs::write(&copy, std::fs::read_to_string(root().join("tests/cli/check.ptx")).unwrap().replace(".entry ", ".entry copy_")).unwrap();
    let e = build_in(dir.path()).file(root().join("tests/cli/check.ptx")).file(&copy).check(true).c_abi(false).try_compile("dup").unwrap_err().to_string();
    assert!(e.contains("the module variable `table` is defined in both"), "{e}");
}

#[test]
fn build_writes_library_bindings_and_header() {
    let dir = tempfile::tempdir().unwrap();
    let o = build_in(dir.path()).file(root().join("examples/c/errors.ptx")).buffer_param("nothing", 0).try_compile("errs").unwrap();
    assert!(o.lib.ends_with("liberrs.a") && o.lib.exists());
    let rs = std::fs::read_to_string(o.bindings.unwrap()).unwrap();
    assert!(rs.contains("pub fn trap_at(cfg: &LaunchConfig, victim: u32)"), "{rs}");
    assert!(rs.contains("pub unsafe fn split_barrier_raw(cfg: &LaunchConfig)"), "{rs}");
    let h = std::fs::read_to_string(o.header.unwrap()).unwrap();
    assert!(h.contains("int ptxr_launch_trap_at(const ptxr_launch_config *cfg, void **args);"), "{h}");
    let names: Vec<&str> = o.kernels.iter().map(|(_, k)| k.name.as_str()).collect();
    assert_eq!(names, ["trap_at", "split_barrier"]);
}

#[test]
fn emit_obj_has_the_c_launch_functions() {
    if !have("nm") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("k.o");
    run(Command::new(env!("CARGO_BIN_EXE_ptxr")).arg("compile").arg(root().join("examples/c/saxpy.ptx")).args(["--emit", "obj", "-o"]).arg(&o));
    let syms = run(Command::new("nm").arg(&o));
    for s in ["T __ptxr_cta_saxpy", "T ptxr_launch_saxpy", "T ptxr_last_error"] {
        assert!(syms.contains(s), "{s} missing:\n{syms}");
    }
    run(Command::new(env!("CARGO_BIN_EXE_ptxr")).arg("compile").arg(root().join("examples/c/saxpy.ptx")).args(["--emit", "obj", "--no-c-abi", "-o"]).arg(&o));
    let syms = run(Command::new("nm").arg(&o));
    assert!(syms.contains("T __ptxr_cta_saxpy") && !syms.contains("ptxr_launch_saxpy"), "{syms}");
}

#[test]
fn build_cross_compiles_for_aarch64() {
    if !have("aarch64-linux-gnu-gcc") {
        println!("skipping: aarch64-linux-gnu-gcc is missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut b = ptxr::Build::new();
    b.out_dir(dir.path()).cargo_metadata(false).target("aarch64-unknown-linux-gnu").opt_level(2);
    let o = b.file(root().join("examples/rust-build/kernels/warp_reduce.ptx")).try_compile("wr").unwrap();
    let members = run(Command::new("ar").arg("t").arg(&o.lib));
    assert!(members.contains("ptxr_rt.o") && members.contains("ptxr_launch.o"), "{members}");
    // Every member is an AArch64 object (ELF e_machine 183 at byte 18).
    let x = dir.path().join("x");
    std::fs::create_dir(&x).unwrap();
    run(Command::new("ar").arg("x").arg(&o.lib).current_dir(&x));
    for e in std::fs::read_dir(&x).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 183);
    }
}
