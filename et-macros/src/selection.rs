//! The build's operator selection, read from the environment when `#[kernel]` (or
//! `#[selected]`) expands.
//!
//! One of `ET_SELECT_OPS_YAML` (a `selected_operators.yaml`), `ET_SELECT_OPS_MODEL`
//! (comma-separated `.pte` paths) or `ET_SELECT_OPS_LIST` (comma-separated operator
//! names); none means every kernel and every dtype. An empty value counts as unset. What
//! the selection means lives in the `selection` crate; this module only finds the
//! inputs, caches the parsed result for the compiler process (keyed by the variable's
//! value and each file's path, length and modification time), and emits the items that
//! make cargo rebuild when the selection changes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use et_schema::scalar_type::ScalarType;
use proc_macro2::TokenStream;
use quote::quote;
use selection::Selection;

/// The variables, in the order messages name them.
const VARS: [&str; 3] = [
    "ET_SELECT_OPS_YAML",
    "ET_SELECT_OPS_MODEL",
    "ET_SELECT_OPS_LIST",
];

/// What the selection says about one operator.
pub(crate) struct OpSelection {
    /// Whether the operator gets registry entries at all.
    pub(crate) registered: bool,
    /// The selected dtypes as a `DtypeSet` mask (`u32::MAX`: all).
    pub(crate) mask: u32,
    /// Items that make cargo rebuild when the selection changes.
    pub(crate) tracking: TokenStream,
}

/// Why the selection for an operator is unavailable.
pub(crate) enum SelectionError {
    /// Report this (names the variable, the path and the problem).
    Report(String),
    /// Already reported by an earlier `#[kernel]` in this compilation: one error per
    /// crate, not one per kernel.
    Reported,
}

/// The selection for `op` (`aten::add.out`). A kernel that `replaces` operators (a fused
/// kernel no program names) is also kept, for every dtype, when the selection keeps each
/// of them for each of `dtypes` (`ScalarType` numbers; none: for any dtype).
pub(crate) fn for_op(
    op: &str,
    replaces: &[String],
    dtypes: &[u8],
) -> Result<OpSelection, SelectionError> {
    let mut tracking = env_tracking();
    let Some(loaded) = load()? else {
        return Ok(OpSelection {
            registered: true,
            mask: u32::MAX,
            tracking,
        });
    };
    tracking.extend(file_tracking(&loaded.files));
    let selection = &loaded.selection;
    let replaced_kept = keeps_everything_replaced(selection, replaces, dtypes);
    if replaced_kept && !selection.allows_op(op) {
        return Ok(OpSelection {
            registered: true,
            mask: u32::MAX,
            tracking,
        });
    }
    let registered = selection.allows_op(op);
    let mask = match selection.allowed_dtypes(op) {
        None => u32::MAX,
        Some(dtypes) => dtypes.iter().fold(0, |m, t| m | t.bit()),
    };
    Ok(OpSelection {
        registered,
        mask,
        tracking,
    })
}

/// Whether the selection keeps entry `name` (in `variant`, when one is given) of the
/// `kernel_metadata` list `key`, with the items that make cargo rebuild when the
/// selection changes. No selection keeps every entry.
pub(crate) fn for_metadata_entry(
    key: &str,
    name: &str,
    variant: Option<&str>,
) -> Result<(bool, TokenStream), SelectionError> {
    let mut tracking = env_tracking();
    let Some(loaded) = load()? else {
        return Ok((true, tracking));
    };
    tracking.extend(file_tracking(&loaded.files));
    tracking.extend(quote!(
        const _: ::core::option::Option<&str> = ::core::option_env!(#DELEGATE_METADATA);
    ));
    let kept = loaded.selection.allows_metadata_entry(key, name, variant)
        || delegate_metadata()?.is_some_and(|m| m.allows_metadata_entry(key, name, variant));
    Ok((kept, tracking))
}

/// Set by a backend crate's build script for its own compilation: a
/// `selected_operators.yaml` holding the `kernel_metadata` it derived from the selected
/// model's delegate payloads (which only the backend can read), added to the selection
/// for that crate's `#[selected(metadata = ..)]` attributes.
const DELEGATE_METADATA: &str = "ET_SELECT_OPS_DELEGATE_METADATA";

/// The selection in [`DELEGATE_METADATA`]'s file, if the variable is set: read once per
/// compilation (every `#[selected]` of the crate asks), again if the file changes.
fn delegate_metadata() -> Result<Option<Arc<Selection>>, SelectionError> {
    type Cached = (
        PathBuf,
        u64,
        Option<SystemTime>,
        Result<Arc<Selection>, String>,
    );
    static CACHE: Mutex<Option<Cached>> = Mutex::new(None);
    static REPORTED: AtomicBool = AtomicBool::new(false);
    let Some(path) = std::env::var_os(DELEGATE_METADATA).map(PathBuf::from) else {
        return Ok(None);
    };
    let meta = std::fs::metadata(&path).ok();
    let len = meta.as_ref().map_or(0, |m| m.len());
    let modified = meta.and_then(|m| m.modified().ok());
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let result = match cache.as_ref() {
        Some((p, l, m, result)) if *p == path && *l == len && *m == modified => result.clone(),
        _ => {
            let result = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| Selection::parse_yaml(&text).map_err(|e| e.to_string()))
                .map(Arc::new)
                .map_err(|e| file_error(DELEGATE_METADATA, &path, &e));
            *cache = Some((path, len, modified, result.clone()));
            result
        }
    };
    drop(cache);
    result
        .map(Some)
        .map_err(|message| report_once(&REPORTED, message))
}

/// Whether `selection` keeps every operator of `replaces` (none: false) for each of
/// `dtypes` (`ScalarType` numbers; none: for any dtype): then it keeps the fused kernel
/// that replaces them.
fn keeps_everything_replaced(selection: &Selection, replaces: &[String], dtypes: &[u8]) -> bool {
    !replaces.is_empty()
        && replaces.iter().all(|p| {
            let kept = |&d: &u8| {
                ScalarType::from_i8(d as i8).is_some_and(|dtype| selection.allows(p, dtype))
            };
            if dtypes.is_empty() {
                selection.allows_op(p)
            } else {
                dtypes.iter().all(kept)
            }
        })
}

/// Whether the selection keeps every operator of `ops` (for some dtype), with the items
/// that make cargo rebuild when the selection changes. No selection keeps them all.
pub(crate) fn for_operators(ops: &[String]) -> Result<(bool, TokenStream), SelectionError> {
    let mut tracking = env_tracking();
    let Some(loaded) = load()? else {
        return Ok((true, tracking));
    };
    tracking.extend(file_tracking(&loaded.files));
    let kept = ops.iter().all(|op| loaded.selection.allows_op(op));
    Ok((kept, tracking))
}

/// `option_env!` of each variable: cargo records them and rebuilds when one changes.
fn env_tracking() -> TokenStream {
    VARS.iter()
        .map(|var| {
            quote!(
                const _: ::core::option::Option<&str> = ::core::option_env!(#var);
            )
        })
        .collect()
}

/// `include_bytes!` of each selection file, so editing it rebuilds the crate. Emitted by
/// the first expansion in a compilation only: once is enough for the crate's dep-info,
/// and a model can be megabytes.
fn file_tracking(files: &[PathBuf]) -> TokenStream {
    static EMITTED: AtomicBool = AtomicBool::new(false);
    if EMITTED.swap(true, Ordering::Relaxed) {
        return TokenStream::new();
    }
    files
        .iter()
        .filter_map(|p| p.to_str())
        .map(|p| {
            quote!(
                const _: &[u8] = ::core::include_bytes!(#p);
            )
        })
        .collect()
}

/// A parsed selection and the files it came from (absolute paths).
struct Loaded {
    selection: Selection,
    files: Vec<PathBuf>,
}

/// What the cache is keyed by: the variable, its value, and each file's identity.
#[derive(PartialEq, Eq)]
struct CacheKey {
    var: &'static str,
    value: String,
    files: Vec<(PathBuf, u64, Option<SystemTime>)>,
}

type CacheEntry = (CacheKey, Result<Arc<Loaded>, String>);

/// The selection in force, or `None` when no variable is set.
fn load() -> Result<Option<Arc<Loaded>>, SelectionError> {
    static CACHE: Mutex<Option<CacheEntry>> = Mutex::new(None);
    static REPORTED: AtomicBool = AtomicBool::new(false);

    let set: Vec<(&'static str, String)> = VARS
        .iter()
        .filter_map(|&var| {
            let value = std::env::var(var).ok()?;
            (!value.trim().is_empty()).then_some((var, value))
        })
        .collect();
    let (var, value) = match set.as_slice() {
        [] => return Ok(None),
        [one] => one.clone(),
        [..] => {
            let names: Vec<&str> = set.iter().map(|(v, _)| *v).collect();
            return Err(report_once(
                &REPORTED,
                format!(
                    "#[kernel] selection: {} are set; set at most one of ET_SELECT_OPS_YAML, ET_SELECT_OPS_MODEL and ET_SELECT_OPS_LIST",
                    names.join(" and ")
                ),
            ));
        }
    };
    let paths = match var {
        "ET_SELECT_OPS_LIST" => Vec::new(),
        "ET_SELECT_OPS_YAML" => vec![absolute(value.trim())],
        _ => value
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(absolute)
            .collect(),
    };
    let key = CacheKey {
        var,
        value: value.clone(),
        files: paths
            .iter()
            .map(|p| {
                let meta = std::fs::metadata(p).ok();
                let len = meta.as_ref().map_or(0, |m| m.len());
                (p.clone(), len, meta.and_then(|m| m.modified().ok()))
            })
            .collect(),
    };

    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let result = match cache.as_ref() {
        Some((cached, result)) if *cached == key => result.clone(),
        _ => {
            let result = parse(var, &value, &paths).map(Arc::new);
            // A new selection (the file changed under a long-lived process): its error,
            // if any, is new too.
            REPORTED.store(false, Ordering::Relaxed);
            *cache = Some((key, result.clone()));
            result
        }
    };
    drop(cache);
    match result {
        Ok(loaded) => Ok(Some(loaded)),
        Err(message) => Err(report_once(&REPORTED, message)),
    }
}

fn report_once(reported: &AtomicBool, message: String) -> SelectionError {
    if reported.swap(true, Ordering::Relaxed) {
        SelectionError::Reported
    } else {
        SelectionError::Report(message)
    }
}

/// A path as given if absolute, else relative to the compiler's working directory (the
/// workspace root when cargo builds a workspace member).
fn absolute(path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|dir| dir.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Reads and parses the selection named by `var`; the error names the variable, the
/// path and the problem.
fn parse(var: &str, value: &str, paths: &[PathBuf]) -> Result<Loaded, String> {
    let selection = match var {
        "ET_SELECT_OPS_LIST" => Selection::from_op_list(value)
            .map_err(|e| format!("#[kernel] selection: ET_SELECT_OPS_LIST={value:?}: {e}"))?,
        "ET_SELECT_OPS_YAML" => {
            let path = &paths[0];
            let text = std::fs::read_to_string(path)
                .map_err(|e| file_error(var, path, &format!("cannot read it: {e}")))?;
            Selection::parse_yaml(&text).map_err(|e| file_error(var, path, &e.to_string()))?
        }
        _ => {
            if paths.is_empty() {
                return Err(format!(
                    "#[kernel] selection: {var}={value:?} names no .pte file"
                ));
            }
            let mut merged = Selection::default();
            for path in paths {
                let bytes = std::fs::read(path)
                    .map_err(|e| file_error(var, path, &format!("cannot read it: {e}")))?;
                let label = path.display().to_string();
                let one = Selection::from_program(&bytes, &label)
                    .map_err(|e| file_error(var, path, &e.to_string()))?;
                merged.merge(&one);
            }
            merged
        }
    };
    Ok(Loaded {
        selection,
        files: paths.to_vec(),
    })
}

fn file_error(var: &str, path: &Path, problem: &str) -> String {
    format!(
        "#[kernel] selection: {var} names `{}`: {problem}",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(list: &str) -> Vec<String> {
        list.split(',').map(|s| s.trim().to_string()).collect()
    }

    /// A fused kernel is kept exactly when every operator it replaces is, for its dtypes:
    /// a selective build made from a program keeps that program's fusion.
    #[test]
    fn fused_kernels_follow_the_operators_they_replace() {
        let f32 = [ScalarType::Float as u8];
        let conv_bn = "aten::convolution.out, aten::_native_batch_norm_legit_no_training.out";
        let sel = Selection::from_op_list(&format!("{conv_bn}, aten::hardtanh.out")).unwrap();
        assert!(keeps_everything_replaced(&sel, &ops(conv_bn), &f32));
        let with_hardtanh = ops(&format!("{conv_bn}, aten::hardtanh.out"));
        assert!(keeps_everything_replaced(&sel, &with_hardtanh, &f32));
        let with_relu = ops(&format!("{conv_bn}, aten::relu.out"));
        assert!(!keeps_everything_replaced(&sel, &with_relu, &f32));
        assert!(!keeps_everything_replaced(&sel, &[], &f32));

        let only_conv = Selection::from_op_list("aten::convolution.out").unwrap();
        assert!(!keeps_everything_replaced(&only_conv, &ops(conv_bn), &f32));

        // The batch norm selected for float64 only: the float32 fused kernel is not needed,
        // while a kernel of any dtype would be.
        let yaml = "\
operators:
  aten::convolution.out:
    is_root_operator: true
    is_used_for_training: false
    include_all_overloads: false
  aten::_native_batch_norm_legit_no_training.out:
    is_root_operator: true
    is_used_for_training: false
    include_all_overloads: false
et_kernel_metadata:
  aten::_native_batch_norm_legit_no_training.out:
    - v1/7;0,1,2,3|7;0|7;0|7;0|7;0|7;0,1,2,3|7;0|7;0
";
        let f64_bn = Selection::parse_yaml(yaml).unwrap();
        assert!(!keeps_everything_replaced(&f64_bn, &ops(conv_bn), &f32));
        assert!(keeps_everything_replaced(&f64_bn, &ops(conv_bn), &[]));
    }
}
