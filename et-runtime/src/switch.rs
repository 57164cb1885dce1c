//! `et_switch!`: run generic code for a tensor's dtype, compiled only for selected dtypes.

/// Runs `body` with a type alias bound to the Rust element type of `dtype`.
///
/// ```ignore
/// et_switch!(S, a.dtype(), [f32, f64, i32], T => add_impl::<T>(a, b, out))
/// et_switch!(in DtypeSet::ALL, a.dtype(), @floats, T => scale::<T>(a, out))
/// ```
///
/// The first form takes a type implementing [`DtypeSelection`](crate::DtypeSelection):
/// in a `#[kernel]` function, its selection parameter (`fn add<S: DtypeSelection>`),
/// which the macro instantiates with the build's selection for the operator. The `in`
/// form takes a [`DtypeSet`](crate::DtypeSet) constant expression. Branches for dtypes outside the set are
/// `const`-false, so their generic code is never instantiated: that is how dtype-selective
/// builds shrink. A dtype that is listed but not selected fails with `NotSupported`
/// ("dtype not selected for this operator in this build"); one that is not listed fails
/// with `InvalidType` ("unsupported dtype").
///
/// Lists can name element types or one of the groups `@floats` (f16, f32, f64), `@ints`
/// (u8, i8, i16, i32, i64), `@reals` (ints and floats) and `@all` (reals and bool).
#[macro_export]
macro_rules! et_switch {
    (in $sel:expr, $dtype:expr, @floats, $T:ident => $body:expr) => {
        $crate::et_switch!(in $sel, $dtype, [$crate::f16, f32, f64], $T => $body)
    };
    (in $sel:expr, $dtype:expr, @ints, $T:ident => $body:expr) => {
        $crate::et_switch!(in $sel, $dtype, [u8, i8, i16, i32, i64], $T => $body)
    };
    (in $sel:expr, $dtype:expr, @reals, $T:ident => $body:expr) => {
        $crate::et_switch!(in $sel, $dtype, [u8, i8, i16, i32, i64, $crate::f16, f32, f64], $T => $body)
    };
    (in $sel:expr, $dtype:expr, @all, $T:ident => $body:expr) => {
        $crate::et_switch!(in $sel, $dtype, [u8, i8, i16, i32, i64, $crate::f16, f32, f64, $crate::Bool], $T => $body)
    };
    (in $sel:expr, $dtype:expr, [$($t:ty),+ $(,)?], $T:ident => $body:expr) => {{
        let __et_dtype: $crate::ScalarType = $dtype;
        $crate::__et_switch_arms!($sel, __et_dtype, $T, $body, [$($t),+], $($t),+)
    }};
    ($sel:ty, $dtype:expr, $($rest:tt)+) => {
        $crate::et_switch!(in <$sel as $crate::DtypeSelection>::SET, $dtype, $($rest)+)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __et_switch_arms {
    ($sel:expr, $d:ident, $T:ident, $body:expr, [$($all:ty),+], $t:ty $(, $rest:ty)*) => {
        if $d == <$t as $crate::Element>::DTYPE
            && const { $crate::DtypeSet::contains($sel, <$t as $crate::Element>::DTYPE) }
        {
            #[allow(dead_code, reason = "the alias may be unused by the body")]
            type $T = $t;
            $body
        } else {
            $crate::__et_switch_arms!($sel, $d, $T, $body, [$($all),+], $($rest),*)
        }
    };
    ($sel:expr, $d:ident, $T:ident, $body:expr, [$($all:ty),+],) => {
        ::core::result::Result::Err($crate::__private::unswitched_dtype(
            $d,
            &[$(<$all as $crate::Element>::DTYPE),+],
        ))
    };
}
