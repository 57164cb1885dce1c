//! What `#[kernel]` emits when it rejects the input: the user's item unchanged plus one
//! `compile_error!` per problem, so the only errors the user sees are the real ones.

use proc_macro2::TokenStream;
use quote::quote;

/// The item as written, plus the errors.
pub(crate) fn emit(item: TokenStream, errors: Vec<syn::Error>) -> TokenStream {
    let errors = errors.iter().map(syn::Error::to_compile_error);
    quote! {
        #item
        #(#errors)*
    }
}
