//! The example prints the classes ExecuTorch's logits rank highest.

use std::process::Command;

#[test]
fn prints_executorchs_top_five() {
    let o = Command::new(env!("CARGO_BIN_EXE_run_model"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let reference = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/mv2.out0.bin"
    ))
    .unwrap();
    let logits: Vec<f32> = reference
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let mut ranked: Vec<usize> = (0..logits.len()).collect();
    ranked.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
    let printed: Vec<usize> = stdout
        .lines()
        .map(|l| l["class ".len()..l.find(':').unwrap()].parse().unwrap())
        .collect();
    assert_eq!(printed, ranked[..5]);
}
