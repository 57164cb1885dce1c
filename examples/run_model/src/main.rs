//! Runs a program with `Module`: `run_model [MODEL.pte [INPUT.bin]]` (defaults: the
//! bundled MobileNetV2 and its input) and prints the five largest logits.

use et_ops as _; // the kernel library registers its kernels by being linked

use et_runtime::{Module, TensorRef};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
    let mut args = std::env::args().skip(1);
    let model = args.next().unwrap_or(format!("{fixtures}/mv2.pte"));
    let input = args.next().unwrap_or(format!("{fixtures}/mv2.in0.bin"));

    let image: Vec<f32> = std::fs::read(input)?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let mut module = Module::from_file(model)?;
    let outputs = module.forward(&[TensorRef::from_slice(&image, &[1, 3, 224, 224]).into()])?;
    let logits = outputs[0]
        .as_slice::<f32>()
        .ok_or("the output is not float32")?;

    let mut ranked: Vec<(usize, f32)> = logits.iter().copied().enumerate().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (class, logit) in &ranked[..5] {
        println!("class {class}: {logit}");
    }
    Ok(())
}
