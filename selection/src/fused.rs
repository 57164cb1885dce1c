//! Fused operators in a selection: each is selected when every operator it replaces is
//! selected for float32 (its only dtype), so that a selective build keeps the fusion of
//! the programs it was made for (no program names them). The table is et-schema's
//! (`et_schema::fused`), which et-runtime's fusion pass reads too.

use et_schema::fused::FUSED_OPERATORS;

/// The operators fused operator `op` (`namespace::name.out`) replaces, if it is one.
pub(crate) fn replaced_by(op: &str) -> Option<&'static [&'static str]> {
    let name = op.strip_suffix(".out")?;
    FUSED_OPERATORS
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.replaces)
}
