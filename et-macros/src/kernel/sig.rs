//! The function model: the user's item plus a classification of its parameters and return
//! type. Everything keeps the user's tokens so errors can point at them.
//!
//! The classification is syntactic (it has to be: it picks the `ArgKind` and the accessor),
//! and matches a type by its last path segment, so `Tensor`, `et_runtime::Tensor` and a
//! re-export all work. rustc then checks that the named types really are the runtime's:
//! the wrapper passes the unboxed values to the user's function with spans at the user's
//! parameter types, so a look-alike type fails there.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Item, ItemFn, PathArguments, ReturnType, Type};

/// What the attribute was put on.
pub(crate) enum Target {
    Fn(Box<Function>),
    /// Anything else, with the tokens to point at and a noun for the message.
    Other {
        tokens: TokenStream,
        what: &'static str,
    },
}

/// A function, as `#[kernel]` sees it.
pub(crate) struct Function {
    pub(crate) item: ItemFn,
    /// The first parameter, expected to be the kernel context.
    pub(crate) context: Context,
    /// The parameters after the context, in operator-argument order.
    pub(crate) params: Vec<Param>,
    pub(crate) returns: Return,
}

/// The first parameter.
pub(crate) enum Context {
    /// `&KernelContext<..>`.
    Ok,
    /// No parameters at all, or the first one is an operator argument.
    Missing(Span),
    /// Something else in first position.
    Wrong(Box<Type>),
}

/// A parameter after the context.
pub(crate) struct Param {
    pub(crate) ty: Type,
    pub(crate) kind: Option<ArgKind>,
}

/// The return type.
pub(crate) enum Return {
    Known(ReturnKind),
    /// No `->` at all; the span of the parameter list's closing side.
    Missing(Span),
    Unsupported(Box<Type>),
}

macro_rules! arg_kinds {
    ($($kind:ident => $accessor:ident $(($unsafe:ident))?,)*) => {
        /// The runtime's `ArgKind`s, with the `KernelArgs` accessor that unboxes each.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum ArgKind { $($kind,)* }

        impl ArgKind {
            /// The `ArgKind` variant name in the runtime.
            pub(crate) fn variant(self) -> &'static str {
                match self { $(ArgKind::$kind => stringify!($kind),)* }
            }

            /// The `KernelArgs` method that unboxes this kind.
            pub(crate) fn accessor(self) -> &'static str {
                match self { $(ArgKind::$kind => stringify!($accessor),)* }
            }

            /// Whether the accessor is an `unsafe fn` (mutable access, taken once).
            pub(crate) fn is_unsafe(self) -> bool {
                match self { $(ArgKind::$kind => arg_kinds!(@unsafe $($unsafe)?),)* }
            }
        }
    };
    (@unsafe unsafe) => { true };
    (@unsafe) => { false };
}

arg_kinds! {
    Tensor => tensor,
    TensorMut => tensor_mut(unsafe),
    OptionalTensor => opt_tensor,
    TensorList => tensor_list,
    TensorListMut => tensor_list_mut(unsafe),
    OptionalTensorList => opt_tensor_list,
    Scalar => scalar,
    OptionalScalar => opt_scalar,
    Int => int,
    OptionalInt => opt_int,
    Double => double,
    OptionalDouble => opt_double,
    Bool => bool,
    OptionalBool => opt_bool,
    IntList => int_list,
    OptionalIntList => opt_int_list,
    DoubleList => double_list,
    OptionalDoubleList => opt_double_list,
    BoolList => bool_list,
    ScalarType => scalar_type,
    OptionalScalarType => opt_scalar_type,
    String => string,
    OptionalString => opt_string,
}

impl ArgKind {
    /// An out argument: the kernel writes it.
    pub(crate) fn is_out(self) -> bool {
        matches!(self, ArgKind::TensorMut | ArgKind::TensorListMut)
    }
}

/// The runtime's `ReturnKind`s a `#[kernel]` function can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReturnKind {
    Outs,
    Int,
    Double,
    Bool,
    Scalar,
}

impl ReturnKind {
    pub(crate) fn variant(self) -> &'static str {
        match self {
            ReturnKind::Outs => "Outs",
            ReturnKind::Int => "Int",
            ReturnKind::Double => "Double",
            ReturnKind::Bool => "Bool",
            ReturnKind::Scalar => "Scalar",
        }
    }

    /// The `KernelArgs` method that stores the value, for functional returns.
    pub(crate) fn setter(self) -> Option<&'static str> {
        match self {
            ReturnKind::Outs => None,
            ReturnKind::Int => Some("set_return_int"),
            ReturnKind::Double => Some("set_return_double"),
            ReturnKind::Bool => Some("set_return_bool"),
            ReturnKind::Scalar => Some("set_return_scalar"),
        }
    }
}

/// Builds the model of `item`. Never fails: what cannot be modelled is a `Target::Other`,
/// and unclassifiable types are kept for the checks to report.
pub(crate) fn parse(item: TokenStream) -> Target {
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(item)) => Target::Fn(Box::new(function(item))),
        Ok(other) => {
            let what = describe(&other);
            let tokens = leading_tokens(&other);
            Target::Other { tokens, what }
        }
        Err(_) => Target::Other {
            tokens: item.into_iter().take(1).collect(),
            what: "this item",
        },
    }
}

fn function(item: ItemFn) -> Function {
    let typed: Vec<&Type> = item
        .sig
        .inputs
        .iter()
        .filter_map(|arg| match arg {
            FnArg::Typed(t) => Some(&*t.ty),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let (context, rest) = match typed.split_first() {
        None => (Context::Missing(item.sig.paren_token.span.join()), &[][..]),
        Some((first, rest)) => {
            if is_context(first) {
                (Context::Ok, rest)
            } else if classify_arg(first).is_some() {
                (Context::Missing(first.span()), &typed[..])
            } else {
                (Context::Wrong(Box::new((*first).clone())), rest)
            }
        }
    };
    let params = rest
        .iter()
        .map(|ty| Param {
            ty: (*ty).clone(),
            kind: classify_arg(ty),
        })
        .collect();
    let returns = match &item.sig.output {
        ReturnType::Default => Return::Missing(item.sig.paren_token.span.close()),
        ReturnType::Type(_, ty) => match classify_return(ty) {
            Some(kind) => Return::Known(kind),
            None => Return::Unsupported(ty.clone()),
        },
    };
    Function {
        item,
        context,
        params,
        returns,
    }
}

/// A noun for a non-function item.
fn describe(item: &Item) -> &'static str {
    match item {
        Item::Struct(_) => "a struct",
        Item::Enum(_) => "an enum",
        Item::Union(_) => "a union",
        Item::Const(_) => "a const",
        Item::Static(_) => "a static",
        Item::Mod(_) => "a module",
        Item::Impl(_) => "an impl block",
        Item::Trait(_) => "a trait",
        Item::Type(_) => "a type alias",
        Item::Use(_) => "a use declaration",
        Item::ForeignMod(_) => "an extern block",
        Item::Macro(_) => "a macro invocation",
        _ => "this item",
    }
}

/// The item's keyword (and name), the smallest tokens that say what it is.
fn leading_tokens(item: &Item) -> TokenStream {
    use quote::ToTokens;
    let mut out = TokenStream::new();
    match item {
        Item::Struct(i) => {
            i.struct_token.to_tokens(&mut out);
            i.ident.to_tokens(&mut out);
        }
        Item::Enum(i) => {
            i.enum_token.to_tokens(&mut out);
            i.ident.to_tokens(&mut out);
        }
        Item::Const(i) => {
            i.const_token.to_tokens(&mut out);
            i.ident.to_tokens(&mut out);
        }
        Item::Static(i) => {
            i.static_token.to_tokens(&mut out);
            i.ident.to_tokens(&mut out);
        }
        Item::Mod(i) => {
            i.mod_token.to_tokens(&mut out);
            i.ident.to_tokens(&mut out);
        }
        Item::Trait(i) => {
            i.trait_token.to_tokens(&mut out);
            i.ident.to_tokens(&mut out);
        }
        Item::Type(i) => {
            i.type_token.to_tokens(&mut out);
            i.ident.to_tokens(&mut out);
        }
        Item::Impl(i) => i.impl_token.to_tokens(&mut out),
        other => other.to_tokens(&mut out),
    }
    out
}

/// Strips invisible groups and parentheses around a type.
fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => peel(&g.elem),
        Type::Paren(p) => peel(&p.elem),
        other => other,
    }
}

/// The last path segment's name and generic arguments, for a plain path type.
fn last_segment(ty: &Type) -> Option<(String, &PathArguments)> {
    match peel(ty) {
        Type::Path(p) if p.qself.is_none() => {
            let seg = p.path.segments.last()?;
            Some((seg.ident.to_string(), &seg.arguments))
        }
        _ => None,
    }
}

/// A path type whose last segment is `name` with no generic arguments... or any, for
/// types that carry lifetimes (`KernelContext<'_>`, `TensorListMut<'_>`).
fn is_named(ty: &Type, name: &str) -> bool {
    matches!(last_segment(ty), Some((n, _)) if n == name)
}

/// A plain name without generic arguments (`i64`, `Scalar`, `Tensor`).
fn is_plain(ty: &Type, name: &str) -> bool {
    matches!(last_segment(ty), Some((n, PathArguments::None)) if n == name)
}

/// The single type argument of `Name<T>`.
fn single_type_arg<'t>(ty: &'t Type, name: &str) -> Option<&'t Type> {
    match last_segment(ty)? {
        (n, PathArguments::AngleBracketed(a)) if n == name && a.args.len() == 1 => {
            match a.args.first()? {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `&X` (shared) with `X` satisfying `f`.
fn shared_ref_to(ty: &Type, f: impl Fn(&Type) -> bool) -> bool {
    matches!(peel(ty), Type::Reference(r) if r.mutability.is_none() && f(&r.elem))
}

/// `&[X]` with `X` satisfying `f`.
fn slice_of(ty: &Type, f: impl Fn(&Type) -> bool) -> bool {
    shared_ref_to(ty, |e| matches!(peel(e), Type::Slice(s) if f(&s.elem)))
}

/// `&KernelContext<..>`.
pub(crate) fn is_context(ty: &Type) -> bool {
    shared_ref_to(ty, |e| is_named(e, "KernelContext"))
}

/// The `ArgKind` of an operator-argument parameter type, if it is a supported one.
pub(crate) fn classify_arg(ty: &Type) -> Option<ArgKind> {
    let tensor_ref = |t: &Type| shared_ref_to(t, |e| is_plain(e, "Tensor"));
    let kind = match peel(ty) {
        Type::Reference(r) if r.mutability.is_some() => {
            return is_plain(&r.elem, "Tensor").then_some(ArgKind::TensorMut);
        }
        t if tensor_ref(t) => ArgKind::Tensor,
        t if shared_ref_to(t, |e| is_plain(e, "str")) => ArgKind::String,
        t if slice_of(t, tensor_ref) => ArgKind::TensorList,
        t if slice_of(t, |e| single_type_arg(e, "Option").is_some_and(tensor_ref)) => {
            ArgKind::OptionalTensorList
        }
        t if slice_of(t, |e| is_plain(e, "i64")) => ArgKind::IntList,
        t if slice_of(t, |e| is_plain(e, "f64")) => ArgKind::DoubleList,
        t if slice_of(t, |e| is_plain(e, "bool")) => ArgKind::BoolList,
        t if is_named(t, "TensorListMut") => ArgKind::TensorListMut,
        t if is_plain(t, "Scalar") => ArgKind::Scalar,
        t if is_plain(t, "i64") => ArgKind::Int,
        t if is_plain(t, "f64") => ArgKind::Double,
        t if is_plain(t, "bool") => ArgKind::Bool,
        t if is_plain(t, "ScalarType") => ArgKind::ScalarType,
        t => {
            let inner = single_type_arg(t, "Option")?;
            match classify_arg(inner)? {
                ArgKind::Tensor => ArgKind::OptionalTensor,
                ArgKind::Scalar => ArgKind::OptionalScalar,
                ArgKind::Int => ArgKind::OptionalInt,
                ArgKind::Double => ArgKind::OptionalDouble,
                ArgKind::Bool => ArgKind::OptionalBool,
                ArgKind::IntList => ArgKind::OptionalIntList,
                ArgKind::DoubleList => ArgKind::OptionalDoubleList,
                ArgKind::ScalarType => ArgKind::OptionalScalarType,
                ArgKind::String => ArgKind::OptionalString,
                _ => return None,
            }
        }
    };
    Some(kind)
}

/// The `ReturnKind` of a return type: `KernelResult<X>` or `Result<X, KernelError>` with
/// `X` one of `()`, `i64`, `f64`, `bool`, `Scalar` (`KernelResult` alone is `()`).
pub(crate) fn classify_return(ty: &Type) -> Option<ReturnKind> {
    let value = match last_segment(ty)? {
        (n, PathArguments::None) if n == "KernelResult" => return Some(ReturnKind::Outs),
        (n, PathArguments::AngleBracketed(a)) if n == "KernelResult" && a.args.len() == 1 => {
            a.args.first()?
        }
        (n, PathArguments::AngleBracketed(a)) if n == "Result" && a.args.len() == 2 => {
            match a.args.last()? {
                GenericArgument::Type(e) if is_plain(e, "KernelError") => a.args.first()?,
                _ => return None,
            }
        }
        _ => return None,
    };
    let GenericArgument::Type(value) = value else {
        return None;
    };
    match peel(value) {
        Type::Tuple(t) if t.elems.is_empty() => Some(ReturnKind::Outs),
        t if is_plain(t, "i64") => Some(ReturnKind::Int),
        t if is_plain(t, "f64") => Some(ReturnKind::Double),
        t if is_plain(t, "bool") => Some(ReturnKind::Bool),
        t if is_plain(t, "Scalar") => Some(ReturnKind::Scalar),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(ty: &str) -> Option<ArgKind> {
        classify_arg(&syn::parse_str(ty).unwrap())
    }

    fn ret(ty: &str) -> Option<ReturnKind> {
        classify_return(&syn::parse_str(ty).unwrap())
    }

    #[test]
    fn argument_kinds() {
        use ArgKind::*;
        let cases = [
            ("&Tensor", Some(Tensor)),
            ("&'a et_runtime::Tensor", Some(Tensor)),
            ("&mut Tensor", Some(TensorMut)),
            ("Option<&Tensor>", Some(OptionalTensor)),
            ("&[&Tensor]", Some(TensorList)),
            ("TensorListMut<'_>", Some(TensorListMut)),
            ("&[Option<&Tensor>]", Some(OptionalTensorList)),
            ("Scalar", Some(Scalar)),
            ("Option<Scalar>", Some(OptionalScalar)),
            ("i64", Some(Int)),
            ("Option<i64>", Some(OptionalInt)),
            ("f64", Some(Double)),
            ("Option<f64>", Some(OptionalDouble)),
            ("bool", Some(Bool)),
            ("Option<bool>", Some(OptionalBool)),
            ("&[i64]", Some(IntList)),
            ("Option<&[i64]>", Some(OptionalIntList)),
            ("&[f64]", Some(DoubleList)),
            ("Option<&[f64]>", Some(OptionalDoubleList)),
            ("&[bool]", Some(BoolList)),
            ("ScalarType", Some(ScalarType)),
            ("Option<ScalarType>", Some(OptionalScalarType)),
            ("&str", Some(String)),
            ("Option<&str>", Some(OptionalString)),
            // Rejected.
            ("Tensor", None),
            ("&mut [i64]", None),
            ("i32", None),
            ("Vec<i64>", None),
            ("Option<&mut Tensor>", None),
            ("Option<Option<i64>>", None),
            ("Option<&[bool]>", None),
            ("&&Tensor", None),
            ("impl Fn()", None),
            ("<X as Y>::Tensor", None),
        ];
        for (ty, kind) in cases {
            assert_eq!(arg(ty), kind, "{ty}");
        }
    }

    #[test]
    fn return_kinds() {
        use ReturnKind::*;
        let cases = [
            ("KernelResult", Some(Outs)),
            ("KernelResult<()>", Some(Outs)),
            ("et_runtime::KernelResult<()>", Some(Outs)),
            ("Result<(), KernelError>", Some(Outs)),
            ("KernelResult<i64>", Some(Int)),
            ("KernelResult<f64>", Some(Double)),
            ("KernelResult<bool>", Some(Bool)),
            ("Result<Scalar, et_runtime::KernelError>", Some(Scalar)),
            ("Result<(), String>", None),
            ("KernelResult<i32>", None),
            ("()", None),
            ("Option<()>", None),
        ];
        for (ty, kind) in cases {
            assert_eq!(ret(ty), kind, "{ty}");
        }
    }

    #[test]
    fn context_type() {
        let ctx = |t: &str| is_context(&syn::parse_str(t).unwrap());
        assert!(ctx("&KernelContext<'_>"));
        assert!(ctx("&KernelContext"));
        assert!(ctx("&'a et_runtime::KernelContext<'a>"));
        assert!(!ctx("&mut KernelContext<'_>"));
        assert!(!ctx("KernelContext<'_>"));
    }
}
