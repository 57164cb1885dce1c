//! The registered scalar prim ops: one thunk per operator that names its [`Op`] and
//! hands over to the shared interpreter, and the signatures they declare.

use super::interpreter::{scalar_prim, Op};
use super::{prim, signatures};
use crate::error::KernelResult;
use crate::kernel::{KernelArgs, KernelContext};

// One signature per parameter list, each declaring a `Scalar` return whether the op
// writes an int, a double or a bool (see `signatures!`).
signatures! {
    TENSOR_INT: [Tensor, Int] -> Scalar;
    TENSOR: [Tensor] -> Scalar;
    SCALARS: [Scalar, Scalar] -> Scalar;
    INTS: [Int, Int] -> Scalar;
    SCALAR: [Scalar] -> Scalar;
    TERNARY: [Scalar, Scalar, Scalar] -> Scalar;
}

/// One thunk and one registry entry per scalar prim op: `$id` registers
/// `$namespace::$rest` with
/// signature `$sig`, served by `$fname`, which runs [`Op`] `$op`.
macro_rules! scalar_prims {
    ($($id:ident, $fname:ident, $namespace:ident::$rest:literal, $sig:ident, $op:ident;)*) => {$(
        fn $fname(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
            scalar_prim(Op::$op, args)
        }
        prim!($id, $namespace::$rest, &$sig, $fname);
    )*};
}

scalar_prims! {
    SYM_SIZE, sym_size, aten::"sym_size.int", TENSOR_INT, SymSize;
    SYM_NUMEL, sym_numel, aten::"sym_numel", TENSOR, SymNumel;
    LOCAL_SCALAR_DENSE, local_scalar_dense, aten::"_local_scalar_dense", TENSOR, LocalScalarDense;
    ADD_SCALAR, add_scalar, executorch_prim::"add.Scalar", SCALARS, Add;
    SUB_SCALAR, sub_scalar, executorch_prim::"sub.Scalar", SCALARS, Sub;
    MUL_SCALAR, mul_scalar, executorch_prim::"mul.Scalar", SCALARS, Mul;
    FLOORDIV_SCALAR, floordiv_scalar, executorch_prim::"floordiv.Scalar", SCALARS, FloorDiv;
    MOD_SCALAR, mod_scalar, executorch_prim::"mod.Scalar", SCALARS, Mod;
    SYM_MAX_SCALAR, sym_max_scalar, executorch_prim::"sym_max.Scalar", SCALARS, Max;
    SYM_MIN_SCALAR, sym_min_scalar, executorch_prim::"sym_min.Scalar", SCALARS, Min;
    TRUEDIV_SCALAR, truediv_scalar, executorch_prim::"truediv.Scalar", SCALARS, TrueDiv;
    EQ_SCALAR, eq_scalar, executorch_prim::"eq.Scalar", SCALARS, Eq;
    GT_SCALAR, gt_scalar, executorch_prim::"gt.Scalar", SCALARS, Gt;
    LT_SCALAR, lt_scalar, executorch_prim::"lt.Scalar", SCALARS, Lt;
    GE_SCALAR, ge_scalar, executorch_prim::"ge.Scalar", SCALARS, Ge;
    LE_SCALAR, le_scalar, executorch_prim::"le.Scalar", SCALARS, Le;
    NEG_SCALAR, neg_scalar, executorch_prim::"neg.Scalar", SCALAR, Neg;
    SYM_FLOAT, sym_float, executorch_prim::"sym_float.Scalar", SCALAR, SymFloat;
    SYM_INT, sym_int, executorch_prim::"sym_int.Scalar", SCALAR, SymInt;
    SYM_NOT, sym_not, executorch_prim::"sym_not.Scalar", SCALAR, SymNot;
    SYM_ITE, sym_ite, executorch_prim::"sym_ite.Scalar", TERNARY, SymIte;
    CEIL_SCALAR, ceil_scalar, executorch_prim::"ceil.Scalar", SCALAR, Ceil;
    ROUND_SCALAR, round_scalar, executorch_prim::"round.Scalar", SCALAR, Round;
    TRUNC_SCALAR, trunc_scalar, executorch_prim::"trunc.Scalar", SCALAR, Trunc;
}

// `floordiv.int` and `mod.int` are `floordiv.Scalar` and `mod.Scalar` on two ints: the
// same functions serve them. Their signature (`[Int, Int]`) is what keeps other values
// out: `load_method` (and `call_entry`) refuse a call passing a double or a bool with
// `InvalidProgram`.
prim!(FLOORDIV_INT, executorch_prim::"floordiv.int", &INTS, floordiv_scalar);
prim!(MOD_INT, executorch_prim::"mod.int", &INTS, mod_scalar);
