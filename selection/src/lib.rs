#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod error;
mod key;
mod name;
mod program;
mod yaml;

use std::collections::{BTreeMap, BTreeSet};

use et_schema::xnnpack::{NodeDatatype, NodeKind};
use et_schema::ScalarType;

pub use error::Error;
pub use key::{KernelKey, TensorMeta};
pub use name::check_op_name;

/// The `kernel_metadata` entry that lists the XNNPACK node kinds a build keeps
/// (XNNPACK's names without the `XNN` prefix). An entry is a kind, which keeps every
/// datatype family of it (`Conv2d`), or a kind and one family after a colon, which keeps
/// only that one (`Conv2d:fp32`, `Conv2d:qint8`, `FullyConnected:qdint8`; the families
/// are [`NodeDatatype`]'s). A selection without the entry keeps no node kind, unless it
/// includes all operators.
pub const XNNPACK_NODE_KINDS_KEY: &str = "etch::xnnpack_node_kinds";

/// Which operators, and which kernel keys (dtypes and dim orders) of each, a build
/// includes, and which node kinds of etch's built-in XNNPACK backend. It holds exactly
/// what ExecuTorch's `selected_operators.yaml` holds: the node kinds are a list under
/// [`XNNPACK_NODE_KINDS_KEY`] in `kernel_metadata`, a map ExecuTorch's tools read,
/// merge and write back but never interpret (it is PyTorch mobile's tracing metadata).
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
            Some(raw) => {
                let sel = raw.into_selection();
                sel.check_node_kinds()?;
                Ok(sel)
            }
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
    /// Beyond `gen_oplist`, the node kinds of every XNNPACK delegate payload go under
    /// [`XNNPACK_NODE_KINDS_KEY`] (no entry when the program has none, so the file of a
    /// program without XNNPACK delegates stays identical to ExecuTorch's).
    ///
    /// The program is fully verified first: a truncated or corrupt file is an error.
    pub fn from_program(bytes: &[u8], label: &str) -> Result<Selection, Error> {
        let ops = program::read_program(bytes, label)?;
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
        if !ops.xnnpack_node_kinds.is_empty() {
            sel.kernel_metadata.insert(
                XNNPACK_NODE_KINDS_KEY.to_owned(),
                ops.xnnpack_node_kinds.into_iter().collect(),
            );
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

    /// The XNNPACK node kinds the selection names (sorted; see
    /// [`XNNPACK_NODE_KINDS_KEY`]).
    pub fn xnnpack_node_kinds(&self) -> &[String] {
        self.kernel_metadata
            .get(XNNPACK_NODE_KINDS_KEY)
            .map_or(&[], |kinds| kinds.as_slice())
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
                    let (n, v) = split_node_entry(entry);
                    n == name && (v.is_none() || variant.is_none() || v == variant)
                })
            })
    }

    /// Whether the build keeps XNNPACK node kind `kind` (`Conv2d`) in any datatype
    /// family: named under [`XNNPACK_NODE_KINDS_KEY`] alone or with a family, or every
    /// operator included.
    pub fn allows_xnnpack_node(&self, kind: &str) -> bool {
        self.allows_metadata_entry(XNNPACK_NODE_KINDS_KEY, kind, None)
    }

    /// Whether the build keeps datatype family `datatype` (`fp32`, `qint8`, `qdint8`) of
    /// XNNPACK node kind `kind`: the kind named alone (every family) or as
    /// `kind:datatype` under [`XNNPACK_NODE_KINDS_KEY`], or every operator included.
    pub fn allows_xnnpack_node_datatype(&self, kind: &str, datatype: &str) -> bool {
        self.allows_metadata_entry(XNNPACK_NODE_KINDS_KEY, kind, Some(datatype))
    }

    /// Refuses node kind names the XNNPACK schema does not define and datatype
    /// families etch does not know.
    fn check_node_kinds(&self) -> Result<(), Error> {
        let unknown: Vec<&str> = self
            .xnnpack_node_kinds()
            .iter()
            .map(String::as_str)
            .filter(|entry| NodeKind::from_name(split_node_entry(entry).0).is_none())
            .collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = NodeKind::names().collect();
            return Err(Error::Yaml {
                message: format!(
                    "kernel_metadata.{XNNPACK_NODE_KINDS_KEY}: {} not an XNNPACK node kind \
                     (names without the XNN prefix: {})",
                    unknown
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                        + if unknown.len() == 1 { " is" } else { " are" },
                    known.join(", ")
                ),
                location: None,
            });
        }
        let bad: Vec<&str> = self
            .xnnpack_node_kinds()
            .iter()
            .map(String::as_str)
            .filter(|entry| {
                split_node_entry(entry)
                    .1
                    .is_some_and(|d| NodeDatatype::from_name(d).is_none())
            })
            .collect();
        if bad.is_empty() {
            return Ok(());
        }
        let known: Vec<&str> = NodeDatatype::names().collect();
        Err(Error::Yaml {
            message: format!(
                "kernel_metadata.{XNNPACK_NODE_KINDS_KEY}: {} {} an unknown datatype \
                 family (write `Kind` for every family or `Kind:FAMILY` with FAMILY one of \
                 {})",
                bad.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if bad.len() == 1 { "names" } else { "name" },
                known.join(", ")
            ),
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
fn split_node_entry(entry: &str) -> (&str, Option<&str>) {
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
