//! A minimal model runner for selective builds: `selective_build MODEL.pte [INPUT.bin]...`.
//!
//! Build it under a selection so the binary holds only the kernels (and dtype branches)
//! the model needs, e.g.
//!
//! ```sh
//! ET_SELECT_OPS_MODEL=$PWD/tests/fixtures/mv2.pte \
//!     cargo build --release -p selective_build --target-dir target/selective-mv2
//! ```
//!
//! It prints how many kernels it registered, runs the model's `forward` on the given raw
//! inputs (ones when none are given), and prints each output's shape and first values.

use std::process::ExitCode;

use et_runtime::{FileLoader, MemoryManager, MethodBuffers, Program};

// Kernels register themselves at link time; naming the crate links it.
use et_ops as _;

fn run(args: &[String]) -> Result<(), String> {
    let path = args
        .first()
        .ok_or("usage: selective_build MODEL.pte [INPUT.bin]...")?;
    println!(
        "{} kernels registered",
        et_runtime::registry::kernels().len()
    );
    let loader = FileLoader::open(path).map_err(|e| format!("{path}: {e}"))?;
    let program = Program::load(&loader).map_err(|e| format!("{path}: {e}"))?;
    let meta = program
        .method_meta("forward")
        .map_err(|e| format!("{path}: {e}"))?;
    let mut buffers = MethodBuffers::for_method(&meta, 64 << 20).map_err(|e| e.to_string())?;
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut method = program.load_method("forward", &mut memory).map_err(|e| {
        let missing: Vec<String> = et_runtime::registry::missing_kernels(&meta)
            .map(|c| format!("  {} (kernel key {})", c.operator, c.key))
            .collect();
        format!("{path}: {e}\n{}", missing.join("\n"))
    })?;
    for i in 0..meta.num_inputs() {
        let info = meta.input_tensor(i).map_err(|e| e.to_string())?;
        let bytes = match args.get(i + 1) {
            Some(file) => std::fs::read(file).map_err(|e| format!("{file}: {e}"))?,
            None => ones(&info),
        };
        method
            .set_input_bytes(i, info.dtype, info.sizes(), &bytes)
            .map_err(|e| format!("input {i}: {e}"))?;
    }
    method.execute().map_err(|e| format!("{path}: {e}"))?;
    for i in 0..method.num_outputs() {
        let out = method.output(i).map_err(|e| e.to_string())?;
        match out.as_tensor() {
            Some(t) => {
                let head: Vec<String> = match t.data::<f32>() {
                    Ok(v) => v.iter().take(5).map(|x| format!("{x:.5}")).collect(),
                    Err(_) => vec![format!("<{}>", t.dtype())],
                };
                println!("Output {i}: sizes {:?}, {} ...", t.sizes(), head.join(", "));
            }
            None => println!("Output {i}: {out:?}"),
        }
    }
    Ok(())
}

fn ones(info: &et_runtime::TensorInfo) -> Vec<u8> {
    match info.dtype {
        et_runtime::ScalarType::Float => 1f32.to_le_bytes().repeat(info.numel()),
        et_runtime::ScalarType::Long => 1i64.to_le_bytes().repeat(info.numel()),
        t => {
            let mut one = vec![0u8; t.element_size()];
            one[0] = 1;
            one.repeat(info.numel())
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("selective_build: {e}");
            ExitCode::from(1)
        }
    }
}
