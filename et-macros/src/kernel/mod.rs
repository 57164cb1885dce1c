//! `#[kernel]`: parse the attribute and the function, check them, generate the wrapper and
//! the registry entries.
//!
//! One pipeline, [`try_expand`]: parse -> check -> expand. Every stage reports into one
//! [`Errors`] collector, so a single compile shows every problem; on error the user's
//! function is emitted unchanged next to the errors ([`fallback`]).

mod args;
mod check;
mod expand;
mod fallback;
mod sig;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

use crate::selection::SelectionError;

pub(crate) use args::DTYPES;

/// The attribute's entry point: never panics on user input.
///
/// The first `#[kernel]` on a function also takes every `#[kernel(..)]` stacked under it
/// (and removes them), so the registry entries of all of them call one instantiation of
/// the body, with the union of their operators' selected dtypes.
pub(crate) fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let (item, stacked) = take_stacked(item);
    let mut attributes = vec![args::parse(attr, &mut errors)];
    for tokens in stacked {
        attributes.push(args::parse(tokens, &mut errors));
    }
    match try_expand(&attributes, item.clone(), errors) {
        Ok(tokens) => tokens,
        Err(errors) => fallback::emit(item, errors),
    }
}

/// The item without its stacked `#[kernel(..)]` attributes, and their argument tokens.
fn take_stacked(item: TokenStream) -> (TokenStream, Vec<TokenStream>) {
    let Ok(mut function) = syn::parse2::<syn::ItemFn>(item.clone()) else {
        return (item, Vec::new());
    };
    let mut stacked = Vec::new();
    function.attrs.retain(|attr| {
        let is_kernel = attr
            .path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "kernel");
        if is_kernel {
            stacked.push(match &attr.meta {
                syn::Meta::List(list) => list.tokens.clone(),
                _ => TokenStream::new(),
            });
        }
        !is_kernel
    });
    if stacked.is_empty() {
        return (item, stacked);
    }
    (function.into_token_stream(), stacked)
}

/// Parse -> check -> expand, collecting every problem before giving up.
fn try_expand(
    attributes: &[args::Args],
    item: TokenStream,
    mut errors: Errors,
) -> Result<TokenStream, Vec<syn::Error>> {
    let target = sig::parse(item);
    for (i, args) in attributes.iter().enumerate() {
        check::check(args, &target, i == 0, &mut errors);
    }
    let mut selections = Vec::new();
    for args in attributes {
        let Some(op) = &args.op else { continue };
        if errors.has_errors() {
            break;
        }
        // A fused kernel is kept where the selection keeps everything it replaces, for
        // its dtypes.
        let dtypes: Vec<u8> = args
            .dtype()
            .map(|d| {
                d.idents()
                    .iter()
                    .filter_map(|i| args::Dtype::named(&i.to_string()))
                    .map(|d| d.number)
                    .collect()
            })
            .unwrap_or_default();
        match crate::selection::for_op(&op.value(), &args.replaces(), &dtypes) {
            Ok(mut selection) => {
                // A fallback's `accepts` narrows what it is compiled and registered for.
                if let Some(m) = args.accepts_mask() {
                    selection.mask &= m;
                }
                selections.push(selection)
            }
            Err(SelectionError::Report(message)) => errors.at(op.span(), message),
            // Reported at another kernel of this crate: emit the function alone.
            Err(SelectionError::Reported) => return Err(Vec::new()),
        }
    }
    errors.finish()?;
    match target {
        sig::Target::Fn(function) if selections.len() == attributes.len() => {
            Ok(expand::expand(attributes, &function, &selections))
        }
        // Unreachable: every path that leaves these unset reported an error. Kept as an
        // error rather than a panic.
        _ => Err(vec![syn::Error::new(
            Span::call_site(),
            "#[kernel] internal error: nothing to expand",
        )]),
    }
}

/// Collects errors from every stage (serde_derive's `Ctxt`, in small).
#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    /// An error at one span.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    /// An error covering all of `tokens`.
    pub(crate) fn spanned(&mut self, tokens: &dyn ToTokens, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new_spanned(tokens, message));
    }

    /// An error syn produced.
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    pub(crate) fn has_errors(&self) -> bool {
        !self.0.is_empty()
    }

    /// `Ok` if nothing was reported.
    pub(crate) fn finish(&mut self) -> Result<(), Vec<syn::Error>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(std::mem::take(&mut self.0))
        }
    }
}
