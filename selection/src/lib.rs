#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod error;
mod key;
mod name;
mod program;
mod yaml;

use std::collections::{BTreeMap, BTreeSet};

use et_schema::ScalarType;

pub use error::Error;
pub use key::{KernelKey, TensorMeta};
pub use name::check_op_name;

/// What a delegate backend records in a selection about the payloads a program hands it:
/// a list under `key()` in `kernel_metadata` (a map ExecuTorch's tools read, merge and
/// write back without interpreting), for example the node kinds a backend's build keeps.
///
/// The selection crate knows no backend: the backend's schema crate implements this,
/// and whoever derives a selection from a model ([`Selection::from_program_with`], a
/// build script, `etch select`) or checks a hand-written one
/// ([`Selection::check_metadata`]) passes it in.
pub trait DelegateMetadata {
    /// The backend id the program's delegates name (`XnnpackBackend`).
    fn backend_id(&self) -> &str;
    /// The `kernel_metadata` list the entries go under.
    fn key(&self) -> &str;
    /// Adds to `entries` what one payload needs; an error says what is wrong with it.
    fn read_payload(&self, payload: &[u8], entries: &mut BTreeSet<String>) -> Result<(), String>;
    /// Checks an entry of the list as a person may write it; an error says what is wrong
    /// and what would be right.
    fn check_entry(&self, entry: &str) -> Result<(), String>;
}

/// Which operators, and which kernel keys (dtypes and dim orders) of each, a build
/// includes, and what delegate backends keep. It holds exactly what ExecuTorch's
/// `selected_operators.yaml` holds: a backend's part is a list in `kernel_metadata`
/// (see [`DelegateMetadata`]), a map ExecuTorch's tools read, merge and write back but
/// never interpret (it is PyTorch mobile's tracing metadata).
///
/// `Selection::default()` selects nothing; [`Selection::all`] selects everything.
///
/// Equality compares everything, including `debug_info`. Kernel key lists are kept
/// sorted and without duplicates (as `gen_oplist` writes them), so two selections with
/// the same keys in a different order are equal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    include_all_operators: bool,
    include_all_non_op_selectives: bool,
    debug_info: Option<Vec<String>>,
    operators: BTreeMap<String, OperatorInfo>,
    /// PyTorch mobile's tracing dtype metadata; carried along, not interpreted.
    kernel_metadata: BTreeMap<String, Vec<String>>,
    et_kernel_metadata: BTreeMap<String, Vec<String>>,
    custom_classes: BTreeSet<String>,
    build_features: BTreeSet<String>,
}

/// What `selected_operators.yaml` records about one entry of `operators`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorInfo {
    /// The operator is called directly by a model (only root operators get kernels).
    pub is_root_operator: bool,
    /// Recorded by ExecuTorch's tools (always `true`); not interpreted.
    pub is_used_for_training: bool,
    /// The entry names an operator without overload (`aten::add`) and selects every
    /// overload of it.
    pub include_all_overloads: bool,
    /// Where the operator came from (model paths); written back, not interpreted.
    pub debug_info: Option<Vec<String>>,
}

impl Default for OperatorInfo {
    /// The defaults torchgen applies to missing fields: a root operator, used for
    /// training, without all overloads, no debug info.
    fn default() -> OperatorInfo {
        OperatorInfo {
            is_root_operator: true,
            is_used_for_training: true,
            include_all_overloads: false,
            debug_info: None,
        }
    }
}

impl OperatorInfo {
    fn combine(&mut self, other: &OperatorInfo) {
        self.is_root_operator |= other.is_root_operator;
        self.is_used_for_training |= other.is_used_for_training;
        self.include_all_overloads |= other.include_all_overloads;
        merge_debug_info(&mut self.debug_info, &other.debug_info);
    }
}

/// torchgen's `merge_debug_info` (a union), keeping first-seen order.
fn merge_debug_info(into: &mut Option<Vec<String>>, from: &Option<Vec<String>>) {
    let Some(from) = from else { return };
    let into = into.get_or_insert_with(Vec::new);
    for item in from {
        if !into.contains(item) {
            into.push(item.clone());
        }
    }
}

/// Sorted union of two sorted, deduplicated lists.
fn merge_sorted(into: &mut Vec<String>, from: &[String]) {
    into.extend(from.iter().cloned());
    into.sort();
    into.dedup();
}

impl Selection {
    /// Every operator and every dtype (`include_all_operators: true`).
    pub fn all() -> Selection {
        Selection {
            include_all_operators: true,
            ..Selection::default()
        }
    }

    /// Reads a `selected_operators.yaml` in ExecuTorch's `gen_oplist` format (also
    /// torchgen's: PyTorch mobile files read too).
    ///
    /// Every top-level key is optional; `null` means the default; keys this crate does
    /// not know are ignored. Operator names and kernel keys are checked. Booleans may be
    /// written the YAML 1.1 way (`Yes`, `off`) as PyYAML reads them. An error names the
    /// key path and the line and column.
    pub fn parse_yaml(text: &str) -> Result<Selection, Error> {
        let raw: Option<yaml::RawSelection> = serde_yaml::from_str(text)?;
        match raw {
            Some(raw) => Ok(raw.into_selection()),
            None => Err(Error::Yaml {
                message: "the document is empty; expected a mapping with `operators`, \
                          `et_kernel_metadata`, ... (or `include_all_operators: true`)"
                    .into(),
                location: None,
            }),
        }
    }

    /// The selection `gen_oplist --root_ops` makes: each operator of a list separated by
    /// commas and/or whitespace (`"aten::add.out, aten::mm.out"`), with the kernel key
    /// `default` (every dtype). Names are checked; an empty list is an error.
    pub fn from_op_list(list: &str) -> Result<Selection, Error> {
        let mut sel = Selection::default();
        for name in list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty())
        {
            check_name(name)?;
            sel.insert(name, KernelKey::DEFAULT);
        }
        if sel.operators.is_empty() {
            return Err(Error::EmptyOpList);
        }
        Ok(sel)
    }

    /// The selection for one kernel library: each `(operator, dtype)` entry it registers,
    /// where `None` is a fallback kernel serving any dtype (key `default`) and
    /// `Some(dtype)` a kernel for that dtype (key `v1/<dtype>;`, the form `gen_oplist
    /// --ops_dict` writes for a dtype name). Names are checked.
    pub fn from_kernel_library<'a>(
        entries: impl IntoIterator<Item = (&'a str, Option<ScalarType>)>,
    ) -> Result<Selection, Error> {
        let mut sel = Selection::default();
        for (name, dtype) in entries {
            check_name(name)?;
            let key = match dtype {
                None => KernelKey::Default,
                Some(t) => KernelKey::from_dtype(t),
            };
            sel.insert(name, &key.to_string());
        }
        Ok(sel)
    }

    /// What ExecuTorch's `gen_oplist --model_file_path` writes for a `.pte`, with `label`
    /// (usually the path as given) as every operator's `debug_info`.
    ///
    /// The operators are those of every method's operator table (`name.overload`, or
    /// `name` when the overload is empty). Each KernelCall contributes the kernel key of
    /// its arguments by `gen_oplist`'s rule: a Tensor gives `dtype;dim_order`; a
    /// TensorList gives its first element's (an empty one gives nothing); an
    /// OptionalTensorList gives its first non-null element's (all-null gives nothing);
    /// other values give nothing. This differs from the runtime's kernel key, which skips
    /// tensor lists. Keys are deduplicated and sorted.
    ///
    /// The program is fully verified first: a truncated or corrupt file is an error.
    pub fn from_program(bytes: &[u8], label: &str) -> Result<Selection, Error> {
        Selection::from_program_with(bytes, label, &[])
    }

    /// [`from_program`](Self::from_program), plus, beyond `gen_oplist`, what each of
    /// `backends` reads from the payloads of the delegates that name it, under its key
    /// (no entry when the program has no such delegate, so the file of a program
    /// without delegates stays identical to ExecuTorch's).
    pub fn from_program_with(
        bytes: &[u8],
        label: &str,
        backends: &[&dyn DelegateMetadata],
    ) -> Result<Selection, Error> {
        let ops = program::read_program(bytes, label, backends)?;
        let mut sel = Selection::default();
        let info = OperatorInfo {
            debug_info: Some(vec![label.to_owned()]),
            ..OperatorInfo::default()
        };
        for name in ops.operators {
            sel.operators.insert(name, info.clone());
        }
        for (name, keys) in ops.kernel_keys {
            sel.et_kernel_metadata
                .insert(name, keys.into_iter().collect());
        }
        for (key, entries) in ops.delegate_metadata {
            if !entries.is_empty() {
                sel.kernel_metadata
                    .insert(key, entries.into_iter().collect());
            }
        }
        Ok(sel)
    }

    /// Adds `other` to this selection, as torchgen's `combine_selective_builders`
    /// does: flags are OR-ed, operators, kernel keys and lists are united (kernel keys
    /// stay sorted), debug info is appended.
    pub fn merge(&mut self, other: &Selection) {
        self.include_all_operators |= other.include_all_operators;
        self.include_all_non_op_selectives |= other.include_all_non_op_selectives;
        merge_debug_info(&mut self.debug_info, &other.debug_info);
        for (name, info) in &other.operators {
            match self.operators.get_mut(name) {
                Some(mine) => mine.combine(info),
                None => {
                    self.operators.insert(name.clone(), info.clone());
                }
            }
        }
        for (tag, dtypes) in &other.kernel_metadata {
            merge_sorted(self.kernel_metadata.entry(tag.clone()).or_default(), dtypes);
        }
        for (name, keys) in &other.et_kernel_metadata {
            merge_sorted(
                self.et_kernel_metadata.entry(name.clone()).or_default(),
                keys,
            );
        }
        self.custom_classes
            .extend(other.custom_classes.iter().cloned());
        self.build_features
            .extend(other.build_features.iter().cloned());
    }

    /// The selection as `selected_operators.yaml`, laid out as ExecuTorch's `gen_oplist`
    /// (PyYAML's `safe_dump`) writes it: for a selection read from such a file or built
    /// from a program, the output is byte-identical to ExecuTorch's.
    pub fn to_yaml(&self) -> String {
        yaml::write(self)
    }

    /// True when every operator is selected (`include_all_operators`).
    pub fn includes_all(&self) -> bool {
        self.include_all_operators
    }

    /// Whether the build includes operator `op` (`aten::add.out`).
    ///
    /// With `include_all_operators`, every operator is. Otherwise, as torchgen's
    /// `is_root_operator`: an `operators` entry for `op` decides by its
    /// `is_root_operator`; failing that, an entry for the name without overload
    /// (`aten::add`) with `include_all_overloads` does. An operator that only has
    /// `et_kernel_metadata` is selected too (ExecuTorch's codegen would require both,
    /// which every file its tools write has).
    ///
    /// (A fused kernel that no program names is kept by its `#[kernel(replaces = ..)]`
    /// when every operator it replaces is selected: the kernel says what it replaces.)
    pub fn allows_op(&self, op: &str) -> bool {
        if self.include_all_operators {
            return true;
        }
        if let Some(info) = self.operators.get(op) {
            return info.is_root_operator;
        }
        if let Some(info) = self.operators.get(name::strip_overload(op)) {
            if info.include_all_overloads {
                return info.is_root_operator;
            }
        }
        self.et_kernel_metadata.contains_key(op)
    }

    /// The dtypes of `op` the build needs, sorted by number, or `None` for every dtype.
    ///
    /// As ExecuTorch's `gen_selected_op_variants.py`: the union of the dtypes of all
    /// tensor entries of all of the op's kernel keys (inputs and outputs alike). `None`
    /// when the op has no kernel keys, or any of them is `default` or has no `/` (a bare
    /// `v1`). (ExecuTorch stops at the first such key and keeps what it collected
    /// before; since key lists are sorted and `default` sorts first, that differs only
    /// for a bare `v1` after specialized keys, where this crate errs on the side of
    /// every dtype.) An operator that is not selected has no dtypes: `Some(vec![])`.
    pub fn allowed_dtypes(&self, op: &str) -> Option<Vec<ScalarType>> {
        if !self.allows_op(op) {
            return Some(Vec::new());
        }
        let keys = self.kernel_keys(op);
        let mut dtypes = BTreeSet::new();
        for key in keys {
            if key == KernelKey::DEFAULT || !key.contains('/') {
                return None;
            }
            // Keys were checked when they entered the selection.
            if let Ok(parsed) = KernelKey::parse(key) {
                dtypes.extend(parsed.tensors().iter().map(|t| t.dtype));
            }
        }
        if dtypes.is_empty() {
            None
        } else {
            Some(dtypes.into_iter().collect())
        }
    }

    /// Whether the build includes `op` for tensors of `dtype`: [`allows_op`] and
    /// [`allowed_dtypes`] together.
    ///
    /// [`allows_op`]: Selection::allows_op
    /// [`allowed_dtypes`]: Selection::allowed_dtypes
    pub fn allows(&self, op: &str, dtype: ScalarType) -> bool {
        self.allows_op(op)
            && self
                .allowed_dtypes(op)
                .is_none_or(|dtypes| dtypes.contains(&dtype))
    }

    /// The selected operators named in the selection (`operators` and
    /// `et_kernel_metadata`), sorted. With `include_all_operators` this is still only
    /// the named ones.
    pub fn operators(&self) -> impl Iterator<Item = &str> {
        let mut a = self.operators.keys().map(String::as_str).peekable();
        let mut b = self
            .et_kernel_metadata
            .keys()
            .map(String::as_str)
            .peekable();
        std::iter::from_fn(move || match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x < y => a.next(),
            (Some(x), Some(y)) if y < x => b.next(),
            (Some(_), Some(_)) => {
                b.next();
                a.next()
            }
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        })
        .filter(move |op| self.allows_op(op))
    }

    /// The kernel keys of `op` in `et_kernel_metadata` (sorted), empty when it has none.
    pub fn kernel_keys(&self, op: &str) -> &[String] {
        self.et_kernel_metadata
            .get(op)
            .map_or(&[], |keys| keys.as_slice())
    }

    /// The `operators` entry for `op`, if there is one.
    pub fn operator_info(&self, op: &str) -> Option<&OperatorInfo> {
        self.operators.get(op)
    }

    /// The entries of the `kernel_metadata` list `key` (sorted), empty when it has none.
    pub fn metadata(&self, key: &str) -> &[String] {
        self.kernel_metadata
            .get(key)
            .map_or(&[], |entries| entries.as_slice())
    }

    /// Whether the build keeps entry `name` of the `kernel_metadata` list `key`, in
    /// `variant` when one is given: the list names it alone (every variant) or as
    /// `name:variant`, or every operator is included. With no variant, any entry of
    /// `name` keeps it. This is how a backend's registrations follow the selection
    /// (`#[et_runtime::link::selected]`) without etch knowing the backend.
    pub fn allows_metadata_entry(&self, key: &str, name: &str, variant: Option<&str>) -> bool {
        self.include_all_operators
            || self.kernel_metadata.get(key).is_some_and(|entries| {
                entries.iter().any(|entry| {
                    let (n, v) = split_metadata_entry(entry);
                    n == name && (v.is_none() || variant.is_none() || v == variant)
                })
            })
    }

    /// Checks the entries of `backend`'s list with its [`DelegateMetadata::check_entry`]:
    /// every wrong entry is named in one error.
    pub fn check_metadata(&self, backend: &dyn DelegateMetadata) -> Result<(), Error> {
        let problems: Vec<String> = self
            .metadata(backend.key())
            .iter()
            .filter_map(|entry| backend.check_entry(entry).err())
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        Err(Error::Yaml {
            message: format!("kernel_metadata.{}: {}", backend.key(), problems.join("; ")),
            location: None,
        })
    }

    /// The top-level `debug_info` list, if present.
    pub fn debug_info(&self) -> Option<&[String]> {
        self.debug_info.as_deref()
    }

    /// Adds `op` with kernel key `key` (and an `operators` entry if it has none).
    fn insert(&mut self, op: &str, key: &str) {
        self.operators.entry(op.to_owned()).or_default();
        merge_sorted(
            self.et_kernel_metadata.entry(op.to_owned()).or_default(),
            &[key.to_owned()],
        );
    }
}

/// A metadata entry's name and, after a colon, its variant (`Conv2d:fp32`: a node kind
/// and its datatype family).
pub fn split_metadata_entry(entry: &str) -> (&str, Option<&str>) {
    match entry.split_once(':') {
        Some((kind, datatype)) => (kind, Some(datatype)),
        None => (entry, None),
    }
}

fn check_name(name: &str) -> Result<(), Error> {
    check_op_name(name).map_err(|reason| Error::InvalidOperatorName {
        name: name.to_owned(),
        reason,
    })
}
