//! Derives the XNNPACK part of a selective build from the model it is made for.
//!
//! `#[et_runtime::link::selected]` keeps each node registration the build's selection
//! lists under `kernel_metadata: etch::xnnpack_node_kinds`. A `selected_operators.yaml`
//! (`ET_SELECT_OPS_YAML`) lists them itself; this script checks the entries against the
//! schema. For `ET_SELECT_OPS_MODEL` it reads the models with their XNNPACK payloads,
//! writes their selection to `$OUT_DIR/delegate_metadata.yaml` and names that file in
//! `ET_SELECT_OPS_DELEGATE_METADATA` for this crate's compilation, which the attribute
//! adds to the selection. So the proc macro, and the selection crate, know no backend.

use std::path::{Path, PathBuf};

use et_xnnpack_schema::NodeKinds;
use selection::{DelegateMetadata, Selection};

fn main() {
    for var in ["ET_SELECT_OPS_MODEL", "ET_SELECT_OPS_YAML"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let set = |var: &str| std::env::var(var).ok().filter(|v| !v.trim().is_empty());
    if let Some(models) = set("ET_SELECT_OPS_MODEL") {
        let selection = model_selection(&models).unwrap_or_else(|message| fail(&message));
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let file = out.join("delegate_metadata.yaml");
        std::fs::write(&file, selection.to_yaml())
            .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", file.display())));
        println!(
            "cargo::rustc-env=ET_SELECT_OPS_DELEGATE_METADATA={}",
            file.display()
        );
    } else if let Some(yaml) = set("ET_SELECT_OPS_YAML") {
        let path = resolve(yaml.trim());
        println!("cargo::rerun-if-changed={}", path.display());
        // A file that does not read or parse is the #[kernel] attribute's to report.
        let parsed = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| Selection::parse_yaml(&text).ok());
        if let Some(Err(e)) = parsed.map(|s| s.check_metadata(&NodeKinds)) {
            fail(&format!(
                "ET_SELECT_OPS_YAML names `{}`: {e}",
                path.display()
            ));
        }
    }
}

/// The selection of every model in the comma-separated `models`, with the node kinds
/// (`Conv2d:fp32`) of their XNNPACK payloads.
fn model_selection(models: &str) -> Result<Selection, String> {
    let mut merged = Selection::default();
    for model in models.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let path = resolve(model);
        println!("cargo::rerun-if-changed={}", path.display());
        let named =
            |problem: String| format!("ET_SELECT_OPS_MODEL names `{}`: {problem}", path.display());
        let bytes = std::fs::read(&path).map_err(|e| named(format!("cannot read it: {e}")))?;
        let label = path.display().to_string();
        let backends: [&dyn DelegateMetadata; 1] = [&NodeKinds];
        let selection = Selection::from_program_with(&bytes, &label, &backends)
            .map_err(|e| named(e.to_string()))?;
        merged.merge(&selection);
    }
    Ok(merged)
}

/// A path as the `#[kernel]` attribute reads it: as given if absolute, else relative to
/// the directory cargo runs the compiler in for a workspace member, the workspace root
/// (the nearest ancestor whose `Cargo.toml` declares `[workspace]`; this crate's own
/// directory outside a workspace).
fn resolve(path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let declares_workspace = |dir: &Path| {
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|toml| toml.lines().any(|l| l.trim() == "[workspace]"))
    };
    let root = manifest
        .ancestors()
        .find(|dir| declares_workspace(dir))
        .unwrap_or(&manifest);
    root.join(path)
}

fn fail(message: &str) -> ! {
    eprintln!("error: et-xnnpack's selective build: {message}");
    std::process::exit(1)
}
