//! Operator names. The grammar is et-schema's ([`et_schema::check_op_name`]); selection
//! files report its verdict as text.

pub use et_schema::op_name::strip_overload;

/// Checks an operator name as ExecuTorch spells it (`aten::add.out`); on failure the
/// message says what is wrong with the name. The rules are [`et_schema::check_op_name`]'s.
pub fn check_op_name(name: &str) -> Result<(), String> {
    et_schema::check_op_name(name).map_err(|e| e.to_string())
}
