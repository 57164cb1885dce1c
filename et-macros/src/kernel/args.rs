//! Parsing the attribute arguments: `"ns::op.overload"`, then `key = value` pairs.
//!
//! Parsing only records what was written (with its tokens, for spans); whether it makes
//! sense (known keys, no duplicates, known dtypes) is decided in `check.rs`.

use std::sync::LazyLock;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Path, Token};

use super::Errors;

/// The attribute keys `#[kernel]` understands, for "unknown key" messages.
pub(crate) const KEYS: &[&str] = &["dtype", "accepts", "crate", "replaces"];

/// What the attribute said.
#[derive(Default)]
pub(crate) struct Args {
    /// The operator name literal, if one was given.
    pub(crate) op: Option<LitStr>,
    /// `key = value` pairs in order, duplicates and unknown keys included.
    pub(crate) keys: Vec<KeyArg>,
}

/// One `key = value` argument.
pub(crate) struct KeyArg {
    pub(crate) key: Ident,
    pub(crate) value: KeyValue,
}

/// The value of a key argument.
pub(crate) enum KeyValue {
    Dtype(DtypeSpec),
    /// `accepts = [..]`: the dtypes a fallback kernel computes (names or groups).
    Accepts(DtypeSpec),
    Crate(Path),
    /// `replaces = ["aten::convolution.out", ..]`: the operators whose consecutive calls
    /// a fused kernel replaces (a load-time rewrite rule writes its calls); a selection
    /// that keeps all of them keeps this kernel.
    Replaces(Vec<LitStr>),
    /// A key `#[kernel]` does not know; its value was skipped.
    Unknown,
}

/// `dtype = f32` or `dtype = [f32, f64]`.
pub(crate) enum DtypeSpec {
    One(Ident),
    List {
        span: Span,
        items: Vec<Ident>,
    },
    /// A value that did not parse (already reported); counts as "a dtype was given".
    Invalid,
}

impl DtypeSpec {
    /// The named dtypes, in order.
    pub(crate) fn idents(&self) -> &[Ident] {
        match self {
            DtypeSpec::One(ident) => std::slice::from_ref(ident),
            DtypeSpec::List { items, .. } => items,
            DtypeSpec::Invalid => &[],
        }
    }
}

impl Args {
    /// The first `dtype = ..` argument.
    pub(crate) fn dtype(&self) -> Option<&DtypeSpec> {
        self.keys.iter().find_map(|k| match &k.value {
            KeyValue::Dtype(d) => Some(d),
            _ => None,
        })
    }

    /// The first `accepts = ..` argument.
    pub(crate) fn accepts(&self) -> Option<&DtypeSpec> {
        self.keys.iter().find_map(|k| match &k.value {
            KeyValue::Accepts(d) => Some(d),
            _ => None,
        })
    }

    /// The `DtypeSet` mask of `accepts = ..` (`None` without it: every dtype).
    pub(crate) fn accepts_mask(&self) -> Option<u32> {
        let spec = self.accepts()?;
        Some(
            spec.idents()
                .iter()
                .filter_map(|i| accepted_mask(&i.to_string()))
                .fold(0, |m, b| m | b),
        )
    }

    /// The operators of the first `replaces = [..]` argument (none without one).
    pub(crate) fn replaces(&self) -> Vec<String> {
        self.keys
            .iter()
            .find_map(|k| match &k.value {
                KeyValue::Replaces(ops) => Some(ops.iter().map(LitStr::value).collect()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The runtime crate path: the first `crate = ..` argument, else `::et_runtime`.
    pub(crate) fn krate(&self) -> TokenStream {
        self.keys
            .iter()
            .find_map(|k| match &k.value {
                KeyValue::Crate(p) => Some(p.to_token_stream()),
                _ => None,
            })
            .unwrap_or_else(|| quote!(::et_runtime))
    }
}

/// Parses the attribute, reporting syntax errors into `errors` and keeping what parsed.
pub(crate) fn parse(attr: TokenStream, errors: &mut Errors) -> Args {
    let mut args = Args::default();
    let parser = |input: ParseStream| parse_into(input, &mut args, errors);
    if let Err(e) = parser.parse2(attr) {
        errors.push(e);
    }
    args
}

fn parse_into(input: ParseStream, args: &mut Args, errors: &mut Errors) -> syn::Result<()> {
    if input.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[kernel] needs the operator name: #[kernel(\"namespace::op.overload\")]",
        ));
    }
    if input.peek(LitStr) {
        args.op = Some(input.parse()?);
        if input.is_empty() {
            return Ok(());
        }
        input.parse::<Token![,]>()?;
    } else if !(input.peek(Ident::peek_any) && input.peek2(Token![=])) {
        let rest: TokenStream = input.parse()?;
        return Err(syn::Error::new_spanned(
            rest,
            "#[kernel] expects the operator name as a string literal, e.g. #[kernel(\"aten::add.out\")]",
        ));
    }
    while !input.is_empty() {
        let key = Ident::parse_any(input)?;
        input.parse::<Token![=]>()?;
        let value = match key.to_string().as_str() {
            "dtype" => KeyValue::Dtype(parse_dtype(input).unwrap_or_else(|e| {
                // Report, skip the value, and go on with the other arguments.
                errors.push(e);
                skip_value(input);
                DtypeSpec::Invalid
            })),
            "accepts" => KeyValue::Accepts(parse_dtype(input).unwrap_or_else(|e| {
                errors.push(e);
                skip_value(input);
                DtypeSpec::Invalid
            })),
            "crate" => KeyValue::Crate(Path::parse_mod_style(input)?),
            "replaces" => {
                let list;
                syn::bracketed!(list in input);
                let ops = Punctuated::<LitStr, Token![,]>::parse_terminated(&list)?;
                KeyValue::Replaces(ops.into_iter().collect())
            }
            _ => {
                // `check_unknown_keys` reports the key.
                skip_value(input);
                KeyValue::Unknown
            }
        };
        args.keys.push(KeyArg { key, value });
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

/// Skips tokens up to the next top-level comma.
fn skip_value(input: ParseStream) {
    while !input.is_empty() && !input.peek(Token![,]) {
        if input.parse::<proc_macro2::TokenTree>().is_err() {
            break;
        }
    }
}

fn parse_dtype(input: ParseStream) -> syn::Result<DtypeSpec> {
    if input.peek(syn::token::Bracket) {
        let content;
        let bracket = syn::bracketed!(content in input);
        let items = Punctuated::<Ident, Token![,]>::parse_terminated_with(&content, |s| {
            s.parse::<Ident>().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "#[kernel] dtype lists name element types, e.g. [f32, f64, i32]",
                )
            })
        })
        .inspect_err(|_| {
            // Consume the rest of the list so syn does not add "expected `]`".
            let _ = content.parse::<TokenStream>();
        })?;
        Ok(DtypeSpec::List {
            span: bracket.span.join(),
            items: items.into_iter().collect(),
        })
    } else if input.peek(Ident) {
        Ok(DtypeSpec::One(input.parse()?))
    } else {
        Err(input.error(
            "#[kernel] dtype must be an element type such as `f32` or a list such as `[f32, f64]`",
        ))
    }
}

/// How generated code names a dtype's Rust element type.
#[derive(Clone, Copy)]
pub(crate) enum RustType {
    /// A primitive, named through `::core::primitive`.
    Primitive(&'static str),
    /// A type re-exported by the runtime's `__private` module.
    Private(&'static str),
}

/// One dtype `#[kernel]` accepts.
pub(crate) struct Dtype {
    /// The name written in the attribute.
    pub(crate) name: &'static str,
    /// The `ScalarType` variant.
    pub(crate) variant: &'static str,
    /// The `ScalarType` number (its bit in a `DtypeSet`).
    pub(crate) number: u8,
    /// The Rust element type (`Element` impl) a generic kernel is instantiated with.
    pub(crate) rust: RustType,
}

/// The groups `accepts` understands, as `et_switch!`'s: `floats` (f16, f32, f64), `ints`
/// (u8, i8, i16, i32, i64), `reals` (both) and `all` (reals and bool).
pub(crate) const GROUPS: &[(&str, &[&str])] = &[
    ("floats", &["f16", "f32", "f64"]),
    ("ints", &["u8", "i8", "i16", "i32", "i64"]),
    (
        "reals",
        &["u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64"],
    ),
    (
        "all",
        &["u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bool"],
    ),
];

/// The mask of one `accepts` item: a dtype name or a group (`None` if neither).
pub(crate) fn accepted_mask(name: &str) -> Option<u32> {
    if let Some(d) = Dtype::named(name) {
        return Some(d.bit());
    }
    let (_, members) = GROUPS.iter().find(|(g, _)| *g == name)?;
    Some(
        members
            .iter()
            .filter_map(|m| Dtype::named(m))
            .fold(0, |acc, d| acc | d.bit()),
    )
}

impl Dtype {
    /// The element type's path in generated code.
    ///
    /// `span` is where rustc reports a bound the type does not meet: the dtype's name in
    /// the attribute.
    pub(crate) fn rust_type(&self, krate: &TokenStream, span: Span) -> TokenStream {
        match self.rust {
            RustType::Primitive(p) => {
                let p = Ident::new(p, span);
                quote_spanned!(span=> ::core::primitive::#p)
            }
            RustType::Private(p) => {
                let p = Ident::new(p, span);
                quote_spanned!(span=> #krate::__private::#p)
            }
        }
    }

    /// The `DtypeSet` bit.
    pub(crate) fn bit(&self) -> u32 {
        1u32 << self.number
    }

    /// Looks up a dtype by the name written in the attribute.
    pub(crate) fn named(name: &str) -> Option<&'static Dtype> {
        DTYPES.iter().find(|d| d.name == name)
    }
}

/// The dtypes `#[kernel]` accepts: et-schema's `ELEMENT_TYPES`, the one table of
/// attribute name, `ScalarType` and Rust element type, in the form code generation uses.
pub(crate) static DTYPES: LazyLock<Vec<Dtype>> = LazyLock::new(|| {
    et_schema::scalar_type::ELEMENT_TYPES
        .iter()
        .map(|e| Dtype {
            name: e.name,
            // The variant's name is its `Debug` form; leaked once per dtype per compile.
            variant: Box::leak(format!("{:?}", e.dtype).into_boxed_str()),
            number: e.dtype as u8,
            rust: if e.primitive {
                RustType::Primitive(e.rust_type)
            } else {
                RustType::Private(e.rust_type)
            },
        })
        .collect()
});
