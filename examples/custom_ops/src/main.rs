//! Runs `custom_ops.pte` with this crate's `my_ops` kernels and the library's `aten::add`.
//!
//! Usage: `cargo run -p custom_ops -- [PROGRAM.pte] [INPUT0.bin INPUT1.bin]`
//! (defaults to the bundled fixture and its inputs).

use std::path::PathBuf;

use et_runtime::{FileLoader, MemoryManager, Program, ScalarType};

// rustc links a crate only if something names it. The kernels register themselves
// through the linker, so nothing else would name these two crates: without these lines
// `load_method` reports `my_ops::mul3.out` and friends as missing kernels.
use custom_ops as _;
use et_ops as _;

fn main() -> Result<(), String> {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let program_path = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| fixtures.join("custom_ops.pte"));
    let inputs: Vec<PathBuf> = if args.len() > 1 {
        args[1..].iter().map(PathBuf::from).collect()
    } else {
        vec![
            fixtures.join("custom_ops.in0.bin"),
            fixtures.join("custom_ops.in1.bin"),
        ]
    };

    let loader =
        FileLoader::open(&program_path).map_err(|e| format!("{}: {e}", program_path.display()))?;
    let program = Program::load(&loader).map_err(|e| e.to_string())?;
    let meta = program.method_meta("forward").map_err(|e| e.to_string())?;
    let mut method_mem = vec![0u8; et_runtime::method_allocator_estimate(&meta)];
    let mut planned_mem: Vec<Vec<u8>> = (0..meta.num_planned_buffers())
        .map(|i| meta.planned_buffer_size(i).map(|n| vec![0u8; n]))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut planned: Vec<&mut [u8]> = planned_mem.iter_mut().map(Vec::as_mut_slice).collect();
    let mut memory = MemoryManager::without_temp(&mut method_mem, &mut planned);
    let mut method = program
        .load_method("forward", &mut memory)
        .map_err(|e| e.to_string())?;
    for (i, path) in inputs.iter().enumerate() {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let info = meta.input_tensor(i).map_err(|e| e.to_string())?;
        method
            .set_input_bytes(i, ScalarType::Float, info.sizes(), &bytes)
            .map_err(|e| format!("input {i}: {e}"))?;
    }
    method.execute().map_err(|e| e.to_string())?;
    let out = method.output(0).map_err(|e| e.to_string())?;
    let t = out.as_tensor().ok_or("output 0 is not a tensor")?;
    println!(
        "Output 0: sizes {:?}, {:?}",
        t.sizes(),
        t.data::<f32>().map_err(|e| e.to_string())?
    );
    Ok(())
}
