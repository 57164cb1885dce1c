//! Code generation for a checked `#[kernel]` function.
//!
//! ```text
//! fn user_fn<T: Real, S: DtypeSelection>(..) -> KernelResult { <body, unchanged> }
//! const _: () = {
//!     fn __et_wrapper_f32(ctx: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
//!         user_fn::<f32, Selected<{ MASK_A | MASK_B }>>(ctx, args.tensor(0)?, ..)
//!     }
//!     static __ET_SIGNATURE: KernelSignature = KernelSignature { .. };
//!     #[distributed_slice(KERNELS)]
//!     static __ET_KERNEL_F32: KernelEntry = KernelEntry::new(&EntryKey { .. }, ..);
//! };
//! ```
//!
//! Everything is a const initializer: no code runs before `main`. Stacked attributes get
//! one `const _` block each, and every wrapper names the same `Selected<..>` type (the
//! union of the operators' selected dtypes), so the body is instantiated once.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use super::args::{Args, Dtype};
use super::check::{dtype_params, is_selection_param};
use super::sig::{Function, Return, ReturnKind};
use crate::selection::OpSelection;

/// One registry entry to generate.
struct Instance {
    /// The dtype key (`None` for a fallback entry).
    key: Option<&'static Dtype>,
    /// The type argument for a generic kernel, with the span of its name in the attribute.
    type_arg: Option<(&'static Dtype, Span)>,
}

pub(crate) fn expand(
    attributes: &[Args],
    function: &Function,
    selections: &[OpSelection],
) -> TokenStream {
    let mut item = function.item.clone();
    let registered: Vec<u32> = selections
        .iter()
        .filter(|s| s.registered)
        .map(|s| s.mask)
        .collect();
    if registered.is_empty() {
        // Not selected in this build: the function stays, nothing refers to it.
        item.attrs.push(syn::parse_quote! {
            #[allow(dead_code, reason = "operator not selected in this build")]
        });
    }
    // The union as a const expression of the per-operator masks.
    let union = quote!({ 0u32 #(| #registered)* });
    let mut out = quote!(#item);
    for (args, selection) in attributes.iter().zip(selections) {
        out.extend(entries(args, function, selection, &union));
    }
    out
}

/// The registry entries of one attribute, in a `const _` block.
fn entries(
    args: &Args,
    function: &Function,
    selection: &OpSelection,
    union: &TokenStream,
) -> TokenStream {
    let krate = args.krate();
    let private = quote!(#krate::__private);
    let Some(op) = &args.op else {
        return TokenStream::new();
    };
    let generic = dtype_params(&function.item.sig).next().is_some();

    let mut instances = Vec::new();
    if selection.registered {
        match args.dtype() {
            None => instances.push(Instance {
                key: None,
                type_arg: None,
            }),
            Some(spec) => {
                for ident in spec.idents() {
                    let Some(dtype) = Dtype::named(&ident.to_string()) else {
                        continue;
                    };
                    if selection.mask & dtype.bit() == 0 {
                        continue;
                    }
                    instances.push(Instance {
                        key: Some(dtype),
                        type_arg: generic.then_some((dtype, ident.span())),
                    });
                }
            }
        }
    }

    let tracking = &selection.tracking;
    if instances.is_empty() {
        return quote! {
            const _: () = { #tracking };
        };
    }
    let mask = selection.mask;

    let returns = match function.returns {
        Return::Known(kind) => kind,
        _ => ReturnKind::Outs,
    };
    let arg_kinds = function.params.iter().filter_map(|p| p.kind).map(|k| {
        let v = Ident::new(k.variant(), Span::call_site());
        quote!(#private::ArgKind::#v)
    });
    let return_variant = Ident::new(returns.variant(), Span::call_site());
    let selected = quote!(#private::Selected<#union>);

    let (namespace, rest) = entry_name(&private, op);
    let mut items = TokenStream::new();
    for instance in &instances {
        let suffix = instance.key.map_or("fallback", |d| d.name);
        let wrapper = format_ident!("__et_wrapper_{}", suffix);
        let entry = format_ident!("__ET_KERNEL_{}", suffix.to_uppercase());
        let dtype_arg = instance
            .type_arg
            .map(|(d, span)| (d.rust_type(&krate, span), span));
        items.extend(wrapper_fn(
            &private, function, &wrapper, dtype_arg, &selected, returns,
        ));
        let dtype_key = match instance.key {
            None => quote!(#private::DtypeKey::FALLBACK),
            Some(d) => {
                let v = Ident::new(d.variant, Span::call_site());
                quote!(#private::DtypeKey::of(#private::ScalarType::#v))
            }
        };
        items.extend(quote! {
            #[#private::linkme::distributed_slice(#private::KERNELS)]
            #[linkme(crate = #private::linkme)]
            static #entry: #private::KernelEntry = #private::KernelEntry::new(
                {
                    static KEY: #private::EntryKey<{ #rest.len() }> =
                        #private::EntryKey::new(#namespace, #rest, #dtype_key);
                    &KEY
                },
                #wrapper,
                &__ET_SIGNATURE,
            );
        });
    }

    quote! {
        const _: () = {
            #tracking
            static __ET_SIGNATURE: #private::KernelSignature = #private::KernelSignature {
                args: &[#(#arg_kinds),*],
                returns: #private::ReturnKind::#return_variant,
                crate_name: #private::CrateName(&::core::env!("CARGO_PKG_NAME")),
                dtypes: #private::DtypeSet(#mask),
            };
            #items
        };
    }
}

/// The namespace and the rest of the name of an entry registering `op`, as its
/// `EntryKey` takes them: a known namespace as its id and the rest of the name as the
/// only text (`Namespace::named("aten")`, `"add.out"`), any other name whole
/// (`Namespace::OTHER`, `"mylib::foo.out"`).
fn entry_name(private: &TokenStream, op: &LitStr) -> (TokenStream, LitStr) {
    let full = op.value();
    let known = full
        .split_once("::")
        .filter(|(namespace, _)| et_schema::op_name::Namespace::known(namespace).is_some());
    match known {
        Some((namespace, rest)) => {
            let namespace = LitStr::new(namespace, op.span());
            (
                quote!(#private::Namespace::named(#namespace)),
                LitStr::new(rest, op.span()),
            )
        }
        None => (quote!(#private::Namespace::OTHER), op.clone()),
    }
}

/// The boxed wrapper: unboxes positions `0..n` and calls the user's function.
fn wrapper_fn(
    private: &TokenStream,
    function: &Function,
    wrapper: &Ident,
    dtype_arg: Option<(TokenStream, Span)>,
    selected: &TokenStream,
    returns: ReturnKind,
) -> TokenStream {
    let name = &function.item.sig.ident;
    let values = function.params.iter().enumerate().map(|(i, param)| {
        let Some(kind) = param.kind else {
            return quote!(());
        };
        let accessor = Ident::new(kind.accessor(), Span::call_site());
        // Spanned at the user's parameter type: a mismatch (a look-alike type of the same
        // name) is reported there.
        let span = param.ty.span();
        let access = quote_spanned!(span=> __et_args.#accessor(#i));
        if kind.is_unsafe() {
            // SAFETY (of the generated block): each position is unboxed exactly once per
            // call, and the values live only for this call. The `unsafe` block keeps the
            // macro's span so lints see generated code.
            let block = quote!(unsafe { #access });
            quote_spanned!(span=> #block?)
        } else {
            quote_spanned!(span=> #access?)
        }
    });
    // Type arguments in declaration order: the selection marker gets the build's
    // selected dtypes, the element type parameter the entry's dtype.
    let sig = &function.item.sig;
    let mut type_args = Vec::new();
    let mut span_of_dtype = None;
    for param in sig.generics.type_params() {
        if is_selection_param(sig, param) {
            type_args.push(selected.clone());
        } else if let Some((ty, span)) = &dtype_arg {
            span_of_dtype = Some(*span);
            type_args.push(ty.clone());
        }
    }
    let callee = match span_of_dtype {
        // Entirely at the dtype's name, so an unmet bound on `T` points there.
        Some(span) => {
            let name = Ident::new(&name.to_string(), span);
            quote_spanned!(span=> #name::<#(#type_args),*>)
        }
        None if type_args.is_empty() => quote!(#name),
        None => quote!(#name::<#(#type_args),*>),
    };
    let call = quote!(#callee(__et_ctx, #(#values),*));
    let body = match returns.setter() {
        None => call,
        Some(setter) => {
            let setter = Ident::new(setter, Span::call_site());
            quote! {
                let __et_value = #call?;
                __et_args.#setter(__et_value)
            }
        }
    };
    quote! {
        fn #wrapper(
            __et_ctx: &#private::KernelContext<'_>,
            __et_args: &#private::KernelArgs<'_>,
        ) -> #private::KernelResult {
            #body
        }
    }
}
