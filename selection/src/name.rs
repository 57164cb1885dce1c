//! Operator names: `namespace::name` with an optional `.overload`.

/// Checks an operator name as ExecuTorch spells it in a program and in
/// `selected_operators.yaml`: `namespace::name` plus an optional `.overload`, e.g.
/// `aten::add.out`, `aten::copy_`, `executorch_prim::et_view.default`,
/// `dim_order_ops::_to_dim_order_copy.out`.
///
/// The namespace and the name are identifiers (ASCII letters, digits and `_`, not starting
/// with a digit); the overload, when present, is a non-empty run of ASCII letters, digits
/// and `_`. On failure the message says what is wrong with the name.
pub fn check_op_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_whitespace()) {
        return Err(format!("it contains whitespace ({c:?})"));
    }
    let Some((namespace, rest)) = name.split_once("::") else {
        return Err(format!(
            "it has no namespace; operator names look like `aten::{name}`"
        ));
    };
    check_identifier(namespace, "namespace")?;
    let (base, overload) = match rest.split_once('.') {
        Some((base, overload)) => (base, Some(overload)),
        None => (rest, None),
    };
    check_identifier(base, "operator name")?;
    if let Some(overload) = overload {
        if overload.is_empty() {
            return Err("the overload after `.` is empty".into());
        }
        if let Some(c) = overload
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(format!("the overload `{overload}` contains {c:?}"));
        }
    }
    Ok(())
}

fn check_identifier(part: &str, what: &str) -> Result<(), String> {
    let mut chars = part.chars();
    match chars.next() {
        None => return Err(format!("the {what} is empty")),
        Some(c) if c.is_ascii_digit() => {
            return Err(format!("the {what} `{part}` starts with a digit"))
        }
        _ => {}
    }
    if let Some(c) = part
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!("the {what} `{part}` contains {c:?}"));
    }
    Ok(())
}

/// `aten::add.out` -> `aten::add`; a name without overload is returned unchanged.
pub(crate) fn strip_overload(name: &str) -> &str {
    match name.rfind("::") {
        Some(ns_end) => match name[ns_end..].find('.') {
            Some(dot) => &name[..ns_end + dot],
            None => name,
        },
        None => name.split('.').next().unwrap_or(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_real_names() {
        for n in [
            "aten::add.out",
            "aten::copy_",
            "aten::sum.IntList_out",
            "aten::_softmax.out",
            "aten::sym_size.int",
            "executorch_prim::et_view.default",
            "dim_order_ops::_to_dim_order_copy.out",
            "my_ops::mul3.out",
            "aten::__and__.Tensor",
        ] {
            assert_eq!(check_op_name(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn rejects_bad_names() {
        for (n, why) in [
            ("", "empty"),
            ("add.out", "no namespace"),
            ("::add.out", "namespace is empty"),
            ("aten::", "operator name is empty"),
            ("aten::add.", "overload after `.` is empty"),
            ("aten::add.o-ut", "contains '-'"),
            ("aten::add out", "whitespace"),
            ("at en::add", "whitespace"),
            ("aten::1add", "starts with a digit"),
            ("aten:add.out", "no namespace"),
            ("aten::add.out.x", "contains '.'"),
            ("a::b::c", "contains ':'"),
        ] {
            let err = check_op_name(n).unwrap_err();
            assert!(err.contains(why), "{n}: {err}");
        }
    }

    #[test]
    fn strips_overloads() {
        assert_eq!(strip_overload("aten::add.out"), "aten::add");
        assert_eq!(strip_overload("aten::copy_"), "aten::copy_");
        assert_eq!(strip_overload("add.out"), "add");
    }
}
