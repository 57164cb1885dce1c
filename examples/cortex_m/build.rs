//! Measures each model's buffers on the host (`MethodBufferSizes::measure`, with the same
//! kernels, backend and selection as the firmware) and writes them as constants the
//! firmware's statics are declared from; puts `memory.x` on the linker's path.

use std::path::{Path, PathBuf};

use et_runtime::{FileLoader, MethodBufferSizes, Program};

use et_ops as _;
use et_xnnpack as _;

/// Each model: the prefix of its constants and its program, from this directory.
const MODELS: [(&str, &str); 3] = [
    ("MLP", "../../tests/fixtures/mlp.pte"),
    ("SMALL_CNN", "../../tests/fixtures/small_cnn.pte"),
    ("Q8_FIRE", "../../tests/fixtures/q8/q8_fire.pte"),
];

fn measure(path: &Path) -> Result<MethodBufferSizes, String> {
    let loader = FileLoader::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let program = Program::load(&loader).map_err(|e| format!("{}: {e}", path.display()))?;
    MethodBufferSizes::measure(&program, "forward")
        .map_err(|e| format!("{}: measuring method forward: {e}", path.display()))
}

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    let mut consts = String::new();
    for (prefix, path) in MODELS {
        println!("cargo:rerun-if-changed={path}");
        match measure(Path::new(path)) {
            Ok(sizes) => consts.push_str(&sizes.to_rust_consts(prefix)),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    let written = std::fs::copy("memory.x", out.join("memory.x"))
        .and_then(|_| std::fs::write(out.join("buffer_sizes.rs"), consts));
    if let Err(e) = written {
        eprintln!("error: writing to {}: {e}", out.display());
        std::process::exit(1);
    }
}
