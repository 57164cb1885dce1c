//! Binary arithmetic: `out = f(a, b)` with broadcasting and type promotion, through
//! [`util::elementwise::binary`](crate::util::elementwise::binary).

pub mod add;
pub mod add_scalar;
pub mod bitwise_and;
pub mod bitwise_or;
pub mod div;
pub mod div_mode;
pub mod div_scalar;
pub mod div_scalar_mode;
pub mod fmod_scalar;
pub mod fmod_tensor;
pub mod maximum;
pub mod minimum;
pub mod mul;
pub mod mul_scalar;
pub mod pow_scalar;
pub mod pow_tensor_scalar;
pub mod pow_tensor_tensor;
pub mod remainder;
pub mod remainder_scalar;
pub mod rsub_scalar;
pub mod sub;
pub mod sub_scalar;
