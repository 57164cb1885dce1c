//! What `#[kernel]` emits when it rejects the input: the user's item unchanged plus one
//! `compile_error!` per problem, so the only errors the user sees are the real ones.

use proc_macro2::TokenStream;
use quote::quote;

use super::args::Args;

/// The item as written, plus the errors.
///
/// A function also gets the `__ET_SELECTED` constant (every dtype), so a body that uses
/// `et_switch!` does not add an unrelated "cannot find value" error to the real one.
pub(crate) fn emit(item: TokenStream, args: &Args, errors: Vec<syn::Error>) -> TokenStream {
    let errors = errors.iter().map(syn::Error::to_compile_error);
    let item = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(mut function) => {
            let krate = args.krate();
            function.block.stmts.insert(
                0,
                syn::parse_quote! {
                    #[allow(dead_code)]
                    const __ET_SELECTED: #krate::__private::DtypeSet = #krate::__private::DtypeSet::ALL;
                },
            );
            quote!(#function)
        }
        Err(_) => item,
    };
    quote! {
        #item
        #(#errors)*
    }
}
