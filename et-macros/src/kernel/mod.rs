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
pub(crate) fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = args::parse(attr, &mut errors);
    match try_expand(&args, item.clone(), errors) {
        Ok(tokens) => tokens,
        Err(errors) => fallback::emit(item, &args, errors),
    }
}

/// Parse -> check -> expand, collecting every problem before giving up.
fn try_expand(
    args: &args::Args,
    item: TokenStream,
    mut errors: Errors,
) -> Result<TokenStream, Vec<syn::Error>> {
    let target = sig::parse(item);
    check::check(args, &target, &mut errors);
    let selection = match &args.op {
        Some(op) if !errors.has_errors() => match crate::selection::for_op(&op.value()) {
            Ok(selection) => Some(selection),
            Err(SelectionError::Report(message)) => {
                errors.at(op.span(), message);
                None
            }
            // Reported at another kernel of this crate: emit the function alone.
            Err(SelectionError::Reported) => return Err(Vec::new()),
        },
        _ => None,
    };
    errors.finish()?;
    match (target, selection) {
        (sig::Target::Fn(function), Some(selection)) => {
            Ok(expand::expand(args, &function, &selection))
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
