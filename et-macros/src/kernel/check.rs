//! The compile-time rules for `#[kernel]`, one function each. Every rule reports at the
//! smallest wrong token and keeps going, so one compile shows every problem.

use std::collections::HashSet;

use syn::punctuated::Punctuated;
use syn::{GenericParam, Signature, Token, Type, TypeParam, TypeParamBound, WherePredicate};

use super::args::{Args, Dtype, DtypeSpec, KeyValue, KEYS};
use super::sig::{ArgKind, Context, Function, Return, Target};
use super::{Errors, DTYPES};

/// Runs every rule that applies to one `#[kernel(..)]` attribute of the function. The
/// rules about the function alone run for the `first` attribute only, so stacked
/// attributes do not repeat them.
pub(crate) fn check(args: &Args, target: &Target, first: bool, errors: &mut Errors) {
    check_op_name(args, errors);
    check_unknown_keys(args, errors);
    check_duplicate_keys(args, errors);
    check_dtype_names(args, errors);
    check_duplicate_dtypes(args, errors);
    check_empty_dtype_list(args, errors);
    check_accepts(args, errors);
    check_replaces(args, errors);
    let function = match target {
        Target::Fn(function) => function,
        Target::Other { tokens, what } => {
            if first {
                check_is_fn(tokens, what, errors);
            }
            return;
        }
    };
    let sig = &function.item.sig;
    if first {
        check_function(function, errors);
    }
    check_generic_has_dtypes(args, sig, errors);
    check_dtype_list_is_generic(args, sig, errors);
    check_out_param_present(args, function, errors);
    check_out_param_mut(args, function, errors);
}

/// The rules about the function itself, whatever the attribute says.
fn check_function(function: &Function, errors: &mut Errors) {
    let sig = &function.item.sig;
    check_not_async(sig, errors);
    check_not_const(sig, errors);
    check_not_unsafe(sig, errors);
    check_not_extern(sig, errors);
    check_not_variadic(sig, errors);
    check_no_receiver(sig, errors);
    check_no_const_generics(sig, errors);
    check_one_dtype_param(sig, errors);
    check_one_selection_param(sig, errors);
    check_context(function, errors);
    check_param_types(function, errors);
    check_return_type(function, errors);
}

/// Whether the overload names an out variant (`out`, `Scalar_out`, ...).
pub(crate) fn is_out_overload(name: &str) -> bool {
    matches!(et_schema::op_name::split_op_name(name), Some((_, _, Some(o))) if o == "out" || o.ends_with("_out"))
}

// Rule: the operator name follows ExecuTorch's grammar, `et_schema::check_op_name` (the
// one definition, shared with selection files): `namespace::op` or `namespace::op.overload`.
fn check_op_name(args: &Args, errors: &mut Errors) {
    use et_schema::op_name::{OpNameError, OpNamePart};
    let Some(lit) = &args.op else { return };
    let name = lit.value();
    let message = match et_schema::check_op_name(&name) {
        Ok(()) => return,
        Err(OpNameError::Whitespace(_)) => "#[kernel] operator names cannot contain whitespace",
        Err(OpNameError::Empty | OpNameError::NoNamespace(_)) => {
            "#[kernel] operator name needs a namespace: `namespace::op` or `namespace::op.overload`"
        }
        Err(OpNameError::EmptyPart(OpNamePart::Namespace)) => {
            "#[kernel] operator name has an empty namespace before `::`"
        }
        Err(OpNameError::EmptyPart(OpNamePart::Name)) => {
            "#[kernel] operator name has an empty operator after `::`"
        }
        Err(OpNameError::EmptyPart(OpNamePart::Overload)) => {
            "#[kernel] operator name has an empty overload after `.`"
        }
        Err(OpNameError::StartsWithDigit(..)) => {
            "#[kernel] operator name parts cannot start with a digit: `namespace::op.overload`"
        }
        Err(OpNameError::BadChar(..)) => {
            "#[kernel] operator name parts may only contain letters, digits and `_`: `namespace::op.overload`"
        }
    };
    errors.at(lit.span(), message);
}

// Rule: `replaces = [..]` lists at least one operator, each a full name with its
// overload (`namespace::op.overload`, as selections key operators): a name the selection
// could never match would silently drop the fused kernel from every selective build.
fn check_replaces(args: &Args, errors: &mut Errors) {
    for key in &args.keys {
        let KeyValue::Replaces(ops) = &key.value else {
            continue;
        };
        if ops.is_empty() {
            errors.at(
                key.key.span(),
                "#[kernel] `replaces` needs at least one operator: `replaces = [\"namespace::op.overload\", ..]`",
            );
        }
        for op in ops {
            let name = op.value();
            let full = et_schema::check_op_name(&name).is_ok()
                && matches!(
                    et_schema::op_name::split_op_name(&name),
                    Some((_, _, Some(_)))
                );
            if !full {
                errors.at(
                    op.span(),
                    "#[kernel] `replaces` names each operator with its overload: `namespace::op.overload`",
                );
            }
        }
    }
}

// Rule: only the keys in `KEYS` are accepted.
fn check_unknown_keys(args: &Args, errors: &mut Errors) {
    let valid = KEYS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    for arg in &args.keys {
        if matches!(arg.value, KeyValue::Unknown) {
            errors.at(
                arg.key.span(),
                format!(
                    "unknown #[kernel] argument `{}`; valid arguments are {valid}",
                    arg.key
                ),
            );
        }
    }
}

// Rule: each key appears at most once.
fn check_duplicate_keys(args: &Args, errors: &mut Errors) {
    let mut seen = HashSet::new();
    for arg in &args.keys {
        let key = arg.key.to_string();
        if !matches!(arg.value, KeyValue::Unknown) && !seen.insert(key) {
            errors.at(
                arg.key.span(),
                format!("duplicate #[kernel] argument `{}`", arg.key),
            );
        }
    }
}

// Rule: every dtype named is one of `DTYPES`.
fn check_dtype_names(args: &Args, errors: &mut Errors) {
    let Some(spec) = args.dtype() else { return };
    for ident in spec.idents() {
        if Dtype::named(&ident.to_string()).is_none() {
            let valid = DTYPES.iter().map(|d| d.name).collect::<Vec<_>>().join(", ");
            errors.at(
                ident.span(),
                format!("unknown #[kernel] dtype `{ident}`; valid dtypes are {valid}"),
            );
        }
    }
}

// Rule: a dtype list names each dtype once.
fn check_duplicate_dtypes(args: &Args, errors: &mut Errors) {
    let Some(spec) = args.dtype() else { return };
    let mut seen = HashSet::new();
    for ident in spec.idents() {
        if !seen.insert(ident.to_string()) {
            errors.at(
                ident.span(),
                format!("duplicate dtype `{ident}` in the #[kernel] dtype list"),
            );
        }
    }
}

// Rule: `accepts` names dtypes or groups, at least one, and only on a fallback kernel
// (a kernel with `dtype = ..` already says which dtypes it serves).
fn check_accepts(args: &Args, errors: &mut Errors) {
    let Some(spec) = args.accepts() else { return };
    for ident in spec.idents() {
        if super::args::accepted_mask(&ident.to_string()).is_none() {
            let valid = DTYPES.iter().map(|d| d.name).collect::<Vec<_>>().join(", ");
            errors.at(
                ident.span(),
                format!("unknown #[kernel] accepted dtype `{ident}`; valid are {valid}, and the groups floats, ints, reals, all"),
            );
        }
    }
    if let DtypeSpec::List { span, items } = spec {
        if items.is_empty() {
            errors.at(
                *span,
                "#[kernel] accepts list is empty; name at least one dtype",
            );
        }
    }
    if args.dtype().is_some() {
        if let Some(k) = args
            .keys
            .iter()
            .find(|k| matches!(k.value, KeyValue::Accepts(_)))
        {
            errors.at(
                k.key.span(),
                "#[kernel] `accepts` is for fallback kernels; with `dtype = ..` the entries already name their dtypes",
            );
        }
    }
}

// Rule: a dtype list is not empty.
fn check_empty_dtype_list(args: &Args, errors: &mut Errors) {
    if let Some(DtypeSpec::List { span, items }) = args.dtype() {
        if items.is_empty() {
            errors.at(
                *span,
                "#[kernel] dtype list is empty; name at least one dtype, e.g. [f32]",
            );
        }
    }
}

// Rule: the attribute goes on a function with a body.
fn check_is_fn(tokens: &proc_macro2::TokenStream, what: &str, errors: &mut Errors) {
    errors.spanned(
        tokens,
        format!("#[kernel] can only be applied to a function, not {what}"),
    );
}

// Rule: kernels run synchronously, so no `async`.
fn check_not_async(sig: &Signature, errors: &mut Errors) {
    if let Some(token) = &sig.asyncness {
        errors.spanned(token, "#[kernel] functions cannot be async");
    }
}

// Rule: kernels are called through a fn pointer at run time, so no `const fn`.
fn check_not_const(sig: &Signature, errors: &mut Errors) {
    if let Some(token) = &sig.constness {
        errors.spanned(token, "#[kernel] functions cannot be const");
    }
}

// Rule: the wrapper calls the kernel without an `unsafe` contract, so no `unsafe fn`.
fn check_not_unsafe(sig: &Signature, errors: &mut Errors) {
    if let Some(token) = &sig.unsafety {
        errors.spanned(token, "#[kernel] functions cannot be unsafe");
    }
}

// Rule: kernels use the Rust ABI, so no `extern "..."`.
fn check_not_extern(sig: &Signature, errors: &mut Errors) {
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "#[kernel] functions cannot be extern");
    }
}

// Rule: operator arguments are fixed in number, so no C variadics.
fn check_not_variadic(sig: &Signature, errors: &mut Errors) {
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "#[kernel] functions cannot be variadic");
    }
}

// Rule: a kernel is a free function, so no `self`.
fn check_no_receiver(sig: &Signature, errors: &mut Errors) {
    if let Some(receiver) = sig.receiver() {
        errors.spanned(
            receiver,
            "#[kernel] functions cannot take `self`; use a free function",
        );
    }
}

// Rule: const generic parameters cannot be tied to a registry entry.
fn check_no_const_generics(sig: &Signature, errors: &mut Errors) {
    for param in &sig.generics.params {
        if let GenericParam::Const(c) = param {
            errors.spanned(
                &c.ident,
                "#[kernel] functions cannot have const generic parameters",
            );
        }
    }
}

// Rule: at most one element type parameter, the one the dtype list instantiates (besides
// the selection parameter).
fn check_one_dtype_param(sig: &Signature, errors: &mut Errors) {
    for extra in dtype_params(sig).skip(1) {
        errors.spanned(
            &extra.ident,
            "#[kernel] functions can have at most one type parameter, the element type",
        );
    }
}

// Rule: at most one parameter bounded by `DtypeSelection` (the build's selected dtypes).
fn check_one_selection_param(sig: &Signature, errors: &mut Errors) {
    for extra in sig
        .generics
        .type_params()
        .filter(|p| is_selection_param(sig, p))
        .skip(1)
    {
        errors.spanned(
            &extra.ident,
            "#[kernel] functions can have at most one `DtypeSelection` parameter",
        );
    }
}

/// Whether type parameter `param` is the dtype-selection marker: bounded by
/// `DtypeSelection` (any path ending so) in its declaration or the where clause.
pub(crate) fn is_selection_param(sig: &Signature, param: &TypeParam) -> bool {
    let names_selection = |bounds: &Punctuated<TypeParamBound, Token![+]>| {
        bounds.iter().any(|b| {
            matches!(b, TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| s.ident == "DtypeSelection"))
        })
    };
    names_selection(&param.bounds)
        || sig.generics.where_clause.as_ref().is_some_and(|w| {
            w.predicates.iter().any(|p| {
                matches!(p, WherePredicate::Type(t)
                    if matches!(&t.bounded_ty, Type::Path(tp) if tp.path.is_ident(&param.ident))
                        && names_selection(&t.bounds))
            })
        })
}

/// The element type parameters: every type parameter except the selection marker.
pub(crate) fn dtype_params(sig: &Signature) -> impl Iterator<Item = &TypeParam> {
    sig.generics
        .type_params()
        .filter(move |p| !is_selection_param(sig, p))
}

// Rule: a generic kernel names the dtypes its type parameter is instantiated with.
fn check_generic_has_dtypes(args: &Args, sig: &Signature, errors: &mut Errors) {
    if args.dtype().is_some() {
        return;
    }
    if let Some(param) = dtype_params(sig).next() {
        errors.spanned(
            &param.ident,
            format!(
                "#[kernel] generic functions need a dtype list to instantiate `{}` with, e.g. dtype = [f32, f64]",
                param.ident
            ),
        );
    }
}

// Rule: a dtype list needs a type parameter to instantiate.
fn check_dtype_list_is_generic(args: &Args, sig: &Signature, errors: &mut Errors) {
    if let Some(DtypeSpec::List { span, .. }) = args.dtype() {
        if dtype_params(sig).next().is_none() {
            errors.at(
                *span,
                "#[kernel] dtype lists need a function generic over the element type, e.g. fn add<T: Element>(..); use `dtype = f32` for one dtype",
            );
        }
    }
}

// Rule: the first parameter is the kernel context, `&KernelContext`.
fn check_context(function: &Function, errors: &mut Errors) {
    match &function.context {
        Context::Ok => {}
        Context::Missing(span) => errors.at(
            *span,
            "#[kernel] functions take the kernel context first: `ctx: &KernelContext`",
        ),
        Context::Wrong(ty) => errors.spanned(
            ty,
            "the first parameter of a #[kernel] function must be the kernel context `&KernelContext`",
        ),
    }
}

// Rule: every parameter after the context has a type the runtime can unbox.
fn check_param_types(function: &Function, errors: &mut Errors) {
    for param in &function.params {
        if param.kind.is_none() {
            errors.spanned(
                &param.ty,
                "#[kernel] does not support this parameter type; use &Tensor, &mut Tensor, Option<&Tensor>, &[&Tensor], TensorListMut, &[Option<&Tensor>], Scalar, i64, f64, bool, &[i64], &[f64], &[bool], ScalarType, &str, or Option<..> of a scalar, list or string",
            );
        }
    }
}

// Rule: the return type is `KernelResult` or `KernelResult<i64 | f64 | bool | Scalar>`.
fn check_return_type(function: &Function, errors: &mut Errors) {
    const MESSAGE: &str = "#[kernel] functions must return KernelResult (out variants) or KernelResult<i64 | f64 | bool | Scalar>";
    match &function.returns {
        Return::Known(_) => {}
        Return::Missing(span) => errors.at(*span, MESSAGE),
        Return::Unsupported(ty) => errors.spanned(ty, MESSAGE),
    }
}

// Rule: an `.out` / `_out` overload has an out parameter (`&mut Tensor` or `TensorListMut`).
fn check_out_param_present(args: &Args, function: &Function, errors: &mut Errors) {
    let Some(op) = &args.op else { return };
    if !is_out_overload(&op.value()) {
        return;
    }
    let has_out = function
        .params
        .iter()
        .any(|p| p.kind.is_some_and(ArgKind::is_out));
    let last_is_shared =
        matches!(function.params.last(), Some(p) if p.kind == Some(ArgKind::Tensor));
    if !has_out && !last_is_shared {
        errors.spanned(
            &function.item.sig.ident,
            format!(
                "#[kernel] operator `{}` is an out variant but the function has no out parameter; add `out: &mut Tensor` last",
                op.value()
            ),
        );
    }
}

// Rule: in an `.out` / `_out` overload the last parameter, the out argument, is `&mut`.
fn check_out_param_mut(args: &Args, function: &Function, errors: &mut Errors) {
    let Some(op) = &args.op else { return };
    if !is_out_overload(&op.value()) {
        return;
    }
    if let Some(last) = function.params.last() {
        let has_out = function
            .params
            .iter()
            .any(|p| p.kind.is_some_and(ArgKind::is_out));
        if last.kind == Some(ArgKind::Tensor) && !has_out {
            errors.spanned(
                &last.ty,
                "#[kernel] out tensors must be `&mut Tensor`: the kernel writes the out argument",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_overloads() {
        assert!(is_out_overload("aten::add.out"));
        assert!(is_out_overload("aten::add.Scalar_out"));
        assert!(!is_out_overload("aten::add.Tensor"));
        assert!(!is_out_overload("aten::sym_size.int"));
        assert!(!is_out_overload("aten::outer"));
    }

    fn op_errors(name: &str) -> usize {
        let mut errors = Errors::default();
        let args = Args {
            op: Some(syn::LitStr::new(name, proc_macro2::Span::call_site())),
            keys: Vec::new(),
        };
        check_op_name(&args, &mut errors);
        errors.finish().err().map_or(0, |e| e.len())
    }

    #[test]
    fn op_names() {
        for good in [
            "aten::add.out",
            "aten::sym_numel",
            "dim_order_ops::_to_dim_order_copy.out",
            "my_ops::mul3.out",
        ] {
            assert_eq!(op_errors(good), 0, "{good}");
        }
        for bad in [
            "add.out",
            "aten::add .out",
            "aten::add.",
            "::add.out",
            "aten::.out",
            "aten::add-relu.out",
            "aten::add.out.x",
            "aten::x::add",
            "aten::1add.out",
            "",
        ] {
            assert_eq!(op_errors(bad), 1, "{bad}");
        }
    }
}
