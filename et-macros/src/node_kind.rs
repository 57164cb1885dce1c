//! `#[xnnpack_node(Kind)]` / `#[xnnpack_node(Kind: datatype)]`: keeps a node kind's
//! registration only when the build's selection keeps the kind (in that datatype family,
//! when one is named).
//!
//! The attribute goes on the `static` that registers the kind in the backend's link-time
//! slice. A selected kind expands to the static unchanged; an unselected one to the same
//! static without its `distributed_slice` attribute, so nothing refers to it and the
//! linker drops it with the kind's code, while the code still type-checks (and raises no
//! dead-code warnings) in every build.

use et_schema::xnnpack::{NodeDatatype, NodeKind};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::parse::{Parse, ParseStream};

use crate::selection::{self, SelectionError};

/// The attribute's entry point: never panics on user input.
pub(crate) fn xnnpack_node(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item) {
        Ok(tokens) => tokens,
        Err(error) => error.to_compile_error(),
    }
}

/// `Kind` or `Kind: datatype`.
struct Args {
    kind: syn::Ident,
    datatype: Option<syn::Ident>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Args> {
        let kind = input.parse()?;
        let datatype = if input.peek(syn::Token![:]) {
            input.parse::<syn::Token![:]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Args { kind, datatype })
    }
}

fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let Args { kind, datatype } = syn::parse2(attr).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected an XNNPACK node kind and optionally its datatype family: \
             #[xnnpack_node(Conv2d)] or #[xnnpack_node(Conv2d: qint8)]",
        )
    })?;
    let ident = kind.to_string();
    // The schema's member name (`XNNConv2d`) or the name tools print (`Conv2d`).
    let name = ident.strip_prefix("XNN").unwrap_or(&ident);
    if NodeKind::from_name(name).is_none() {
        let known: Vec<&str> = NodeKind::names().collect();
        return Err(syn::Error::new(
            kind.span(),
            format!(
                "`{ident}` is not an XNNPACK node kind; expected one of {} (with or without the XNN prefix)",
                known.join(", ")
            ),
        ));
    }
    let datatype = datatype
        .map(|d| {
            let text = d.to_string();
            match NodeDatatype::from_name(&text) {
                Some(_) => Ok(text),
                None => Err(syn::Error::new(
                    d.span(),
                    format!(
                        "`{text}` is not a datatype family of XNNPACK nodes; expected one of {}",
                        NodeDatatype::names().collect::<Vec<_>>().join(", ")
                    ),
                )),
            }
        })
        .transpose()?;
    let mut item: syn::ItemStatic = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[xnnpack_node] goes on the `static` that registers the node kind",
        )
    })?;
    let (selected, tracking) = match selection::for_xnnpack_node(name, datatype.as_deref()) {
        Ok(found) => found,
        Err(SelectionError::Report(message)) => {
            return Err(syn::Error::new(Span::call_site(), message))
        }
        // Reported by an earlier expansion in this crate: keep the registration.
        Err(SelectionError::Reported) => return Ok(item.into_token_stream()),
    };
    if !selected {
        item.attrs.retain(|a| {
            a.path()
                .segments
                .last()
                .is_none_or(|s| s.ident != "distributed_slice")
        });
        item.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    }
    Ok(quote! {
        #tracking
        #item
    })
}
