//! Code generation for a checked `#[kernel]` function.
//!
//! ```text
//! fn user_fn(..) -> KernelResult { const __ET_SELECTED: DtypeSet = ..; <body> }
//! const _: () = {
//!     fn __et_wrapper_f32(ctx: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
//!         user_fn::<f32>(ctx, args.tensor(0)?, .., unsafe { args.tensor_mut(3) }?)
//!     }
//!     static __ET_SIGNATURE: KernelSignature = KernelSignature { .. };
//!     #[distributed_slice(KERNELS)]
//!     static __ET_KERNEL_F32: KernelEntry = KernelEntry { .. };
//! };
//! ```
//!
//! Everything is a const initializer: no code runs before `main`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use super::args::{Args, Dtype};
use super::sig::{Function, Return, ReturnKind};
use crate::selection::OpSelection;

/// One registry entry to generate.
struct Instance {
    /// The dtype key (`None` for a fallback entry).
    key: Option<&'static Dtype>,
    /// The type argument for a generic kernel, with the span of its name in the attribute.
    type_arg: Option<(&'static Dtype, Span)>,
}

pub(crate) fn expand(args: &Args, function: &Function, selection: &OpSelection) -> TokenStream {
    let krate = args.krate();
    let private = quote!(#krate::__private);
    let Some(op) = &args.op else {
        return TokenStream::new();
    };
    let generic = function.item.sig.generics.type_params().next().is_some();

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

    let mut item = function.item.clone();
    let mask = selection.mask;
    inject_selected(&mut item, &private, mask);
    if instances.is_empty() {
        // Not selected in this build: the function stays, nothing refers to it.
        item.attrs.push(syn::parse_quote! {
            #[allow(dead_code, reason = "operator not selected in this build")]
        });
    }

    let tracking = &selection.tracking;
    if instances.is_empty() {
        return quote! {
            #item
            const _: () = { #tracking };
        };
    }

    let returns = match function.returns {
        Return::Known(kind) => kind,
        _ => ReturnKind::Outs,
    };
    let arg_kinds = function.params.iter().filter_map(|p| p.kind).map(|k| {
        let v = Ident::new(k.variant(), Span::call_site());
        quote!(#private::ArgKind::#v)
    });
    let return_variant = Ident::new(returns.variant(), Span::call_site());

    let mut items = TokenStream::new();
    for instance in &instances {
        let suffix = instance.key.map_or("fallback", |d| d.name);
        let wrapper = format_ident!("__et_wrapper_{}", suffix);
        let entry = format_ident!("__ET_KERNEL_{}", suffix.to_uppercase());
        items.extend(wrapper_fn(
            &private,
            function,
            &wrapper,
            instance
                .type_arg
                .map(|(d, span)| (d.rust_type(&krate, span), span)),
            returns,
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
            static #entry: #private::KernelEntry = #private::KernelEntry {
                name: #op,
                hash: #private::op_hash(#op),
                dtype: #dtype_key,
                function: #wrapper,
                signature: &__ET_SIGNATURE,
            };
        });
    }

    quote! {
        #item
        const _: () = {
            #tracking
            static __ET_SIGNATURE: #private::KernelSignature = #private::KernelSignature {
                args: &[#(#arg_kinds),*],
                returns: #private::ReturnKind::#return_variant,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                dtypes: #private::DtypeSet(#mask),
            };
            #items
        };
    }
}

/// Defines `__ET_SELECTED`, the dtypes selected for the operator, at the top of the
/// function's body (`et_switch!` reads it). A function under several `#[kernel]`
/// attributes already has it from the outer one: it then covers every operator's dtypes.
fn inject_selected(item: &mut syn::ItemFn, private: &TokenStream, mut mask: u32) {
    let existing = item.block.stmts.iter().position(
        |stmt| matches!(stmt, syn::Stmt::Item(syn::Item::Const(c)) if c.ident == "__ET_SELECTED"),
    );
    if let Some(index) = existing {
        if let syn::Stmt::Item(syn::Item::Const(c)) = &item.block.stmts[index] {
            mask |= previous_mask(&c.expr);
        }
        item.block.stmts.remove(index);
    }
    item.block.stmts.insert(
        0,
        syn::parse_quote! {
            #[allow(dead_code)]
            const __ET_SELECTED: #private::DtypeSet = #private::DtypeSet(#mask);
        },
    );
}

/// The mask in `DtypeSet(<mask>)` as an earlier `#[kernel]` wrote it.
fn previous_mask(expr: &syn::Expr) -> u32 {
    match expr {
        syn::Expr::Call(call) => match call.args.first() {
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            })) => n.base10_parse().unwrap_or(u32::MAX),
            _ => u32::MAX,
        },
        _ => u32::MAX,
    }
}

/// The boxed wrapper: unboxes positions `0..n` and calls the user's function.
fn wrapper_fn(
    private: &TokenStream,
    function: &Function,
    wrapper: &Ident,
    type_arg: Option<(TokenStream, Span)>,
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
    let callee = match type_arg {
        Some((ty, span)) => {
            // Entirely at the dtype's name, so an unmet bound on `T` points there.
            let name = Ident::new(&name.to_string(), span);
            quote_spanned!(span=> #name::<#ty>)
        }
        None => quote!(#name),
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
