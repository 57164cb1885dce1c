//! `etch run` on a program with complex outputs prints them as PyTorch does and writes
//! their bytes with `--output-dir`.

use std::process::Command;

use etch_tests::fixtures_dir;

#[test]
fn complex64_outputs_print_and_write() {
    let dir = fixtures_dir().join("opcases");
    let out = std::env::temp_dir().join(format!("etch-complex-{}", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .arg("run")
        .arg(dir.join("_conj_physical_complex64.pte"))
        .arg("--input")
        .arg(dir.join("_conj_physical_complex64.in0.bin"))
        .arg("--output-dir")
        .arg(&out)
        .output()
        .expect("etch runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("dtype=complex64"), "{stdout}");
    let written = std::fs::read(out.join("output0.bin")).unwrap();
    let expected = std::fs::read(dir.join("_conj_physical_complex64.out0.bin")).unwrap();
    // The first element, as PyTorch prints a complex number: `a+bj` or `a-bj`.
    let part = |i: usize| f32::from_le_bytes(expected[4 * i..4 * i + 4].try_into().unwrap());
    let (re, im) = (part(0), part(1));
    let sign = if im.is_sign_negative() { '-' } else { '+' };
    let first = format!("[[{re}{sign}{}j, ", im.abs());
    assert!(stdout.contains(&first), "{first} not in {stdout}");
    assert_eq!(written, expected, "conj is exact");
}
