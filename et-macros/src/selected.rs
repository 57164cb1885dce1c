//! `#[selected(metadata = "key", entry = Name, variant = family)]`: keeps a registration
//! only when the build's selection keeps its entry.
//!
//! The attribute goes on a `static` that adds an item to a link-time slice, for example a
//! backend's node kinds. The selection lists what a build keeps under `kernel_metadata:
//! <key>`, as `Name` (every variant) or `Name:variant`; what the names mean is the
//! registering crate's business, so this crate knows no backend. A kept entry expands to
//! the static unchanged; a dropped one to the same static without its `distributed_slice`
//! attribute (and that attribute's `linkme` helper), so nothing refers to it and the linker drops it with the code it names,
//! while the code still type-checks (and raises no dead-code warnings) in every build.
//!
//! `#[selected(operators = ["aten::permute_copy.out", ..])]` keeps the registration when
//! the selection keeps every one of those operators (for any dtype): a kernel crate's
//! load-time rewrite rule goes with the operators it rewrites.
//!
//! `strip_prefix = "XNN"` compares the entry's name without that prefix, so a crate can
//! pass the identifier its schema spells (`XNNConv2d`) and list the name its tools print
//! (`Conv2d`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::parse::{Parse, ParseStream};

use crate::selection::{self, SelectionError};

/// The attribute's entry point: never panics on user input.
pub(crate) fn selected(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item) {
        Ok(tokens) => tokens,
        Err(error) => error.to_compile_error(),
    }
}

const USAGE: &str = "expected `metadata = \"key\", entry = Name` and optionally \
                     `variant = name` and `strip_prefix = \"prefix\"`, or \
                     `operators = [\"ns::op.overload\", ..]`";

/// The attribute's arguments.
enum Args {
    /// An entry of a `kernel_metadata` list.
    Metadata {
        metadata: syn::LitStr,
        entry: syn::Ident,
        variant: Option<syn::Ident>,
        strip_prefix: Option<syn::LitStr>,
    },
    /// Operators, all of which the selection must keep.
    Operators(Vec<syn::LitStr>),
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Args> {
        let (mut metadata, mut entry, mut variant, mut strip_prefix) = (None, None, None, None);
        let mut operators: Option<Vec<syn::LitStr>> = None;
        while !input.is_empty() {
            let key: syn::Ident = input.parse()?;
            input.parse::<syn::Token![=]>()?;
            let duplicate = || syn::Error::new(key.span(), format!("`{key}` given twice"));
            match key.to_string().as_str() {
                "metadata" if metadata.is_none() => metadata = Some(input.parse()?),
                "entry" if entry.is_none() => entry = Some(input.parse()?),
                "variant" if variant.is_none() => variant = Some(input.parse()?),
                "strip_prefix" if strip_prefix.is_none() => strip_prefix = Some(input.parse()?),
                "operators" if operators.is_none() => {
                    let list;
                    syn::bracketed!(list in input);
                    let ops = syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated(&list)?;
                    operators = Some(ops.into_iter().collect());
                }
                "metadata" | "entry" | "variant" | "strip_prefix" | "operators" => {
                    return Err(duplicate())
                }
                _ => return Err(syn::Error::new(key.span(), USAGE)),
            }
            if !input.is_empty() {
                input.parse::<syn::Token![,]>()?;
            }
        }
        let missing = |what: &str| {
            syn::Error::new(
                Span::call_site(),
                format!("#[selected] needs `{what}`; {USAGE}"),
            )
        };
        if let Some(operators) = operators {
            if metadata.is_some() || entry.is_some() || variant.is_some() || strip_prefix.is_some()
            {
                return Err(syn::Error::new(
                    Span::call_site(),
                    format!("#[selected] takes `operators` or a metadata entry, not both; {USAGE}"),
                ));
            }
            return Ok(Args::Operators(operators));
        }
        Ok(Args::Metadata {
            metadata: metadata.ok_or_else(|| missing("metadata"))?,
            entry: entry.ok_or_else(|| missing("entry"))?,
            variant,
            strip_prefix,
        })
    }
}

fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args: Args = syn::parse2(attr)?;
    let mut item: syn::ItemStatic = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[selected] goes on the `static` that adds the entry to a link-time slice",
        )
    })?;
    let found = match &args {
        Args::Metadata {
            metadata,
            entry,
            variant,
            strip_prefix,
        } => {
            let ident = entry.to_string();
            let prefix = strip_prefix.as_ref().map(syn::LitStr::value);
            let name = prefix
                .as_deref()
                .and_then(|p| ident.strip_prefix(p))
                .unwrap_or(&ident);
            let variant = variant.as_ref().map(ToString::to_string);
            selection::for_metadata_entry(&metadata.value(), name, variant.as_deref())
        }
        Args::Operators(ops) => {
            let ops: Vec<String> = ops.iter().map(syn::LitStr::value).collect();
            selection::for_operators(&ops)
        }
    };
    let (selected, tracking) = match found {
        Ok(found) => found,
        Err(SelectionError::Report(message)) => {
            return Err(syn::Error::new(Span::call_site(), message))
        }
        // Reported by an earlier expansion in this crate: keep the registration.
        Err(SelectionError::Reported) => return Ok(item.into_token_stream()),
    };
    if !selected {
        // The slice attribute goes, and with it its helper attribute (`#[linkme(...)]`),
        // which means nothing on its own.
        item.attrs.retain(|a| {
            a.path()
                .segments
                .last()
                .is_none_or(|s| s.ident != "distributed_slice" && s.ident != "linkme")
        });
        item.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    }
    Ok(quote! {
        #tracking
        #item
    })
}
