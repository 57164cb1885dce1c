//! The registered scalar prim ops: one thunk per operator that names its [`Op`] and
//! hands over to the shared interpreter, and the signatures they declare.

use super::interpreter::{scalar_prim, Op};
use super::{prim, signatures};
use crate::error::KernelResult;
use crate::kernel::{KernelArgs, KernelContext};

signatures! {
    TENSOR_INT_TO_INT: [Tensor, Int] -> Int;
    TENSOR_TO_INT: [Tensor] -> Int;
    SCALARS_TO_SCALAR: [Scalar, Scalar] -> Scalar;
    SCALARS_TO_DOUBLE: [Scalar, Scalar] -> Double;
    SCALARS_TO_BOOL: [Scalar, Scalar] -> Bool;
    INTS_TO_INT: [Int, Int] -> Int;
    SCALAR_TO_SCALAR: [Scalar] -> Scalar;
    SCALAR_TO_DOUBLE: [Scalar] -> Double;
    SCALAR_TO_INT: [Scalar] -> Int;
    SCALAR_TO_BOOL: [Scalar] -> Bool;
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
    SYM_SIZE, sym_size, aten::"sym_size.int", TENSOR_INT_TO_INT, SymSize;
    SYM_NUMEL, sym_numel, aten::"sym_numel", TENSOR_TO_INT, SymNumel;
    ADD_SCALAR, add_scalar, executorch_prim::"add.Scalar", SCALARS_TO_SCALAR, Add;
    SUB_SCALAR, sub_scalar, executorch_prim::"sub.Scalar", SCALARS_TO_SCALAR, Sub;
    MUL_SCALAR, mul_scalar, executorch_prim::"mul.Scalar", SCALARS_TO_SCALAR, Mul;
    FLOORDIV_SCALAR, floordiv_scalar, executorch_prim::"floordiv.Scalar", SCALARS_TO_SCALAR, FloorDiv;
    MOD_SCALAR, mod_scalar, executorch_prim::"mod.Scalar", SCALARS_TO_SCALAR, Mod;
    SYM_MAX_SCALAR, sym_max_scalar, executorch_prim::"sym_max.Scalar", SCALARS_TO_SCALAR, Max;
    SYM_MIN_SCALAR, sym_min_scalar, executorch_prim::"sym_min.Scalar", SCALARS_TO_SCALAR, Min;
    TRUEDIV_SCALAR, truediv_scalar, executorch_prim::"truediv.Scalar", SCALARS_TO_DOUBLE, TrueDiv;
    FLOORDIV_INT, floordiv_int, executorch_prim::"floordiv.int", INTS_TO_INT, FloorDivInt;
    MOD_INT, mod_int_op, executorch_prim::"mod.int", INTS_TO_INT, ModInt;
    EQ_SCALAR, eq_scalar, executorch_prim::"eq.Scalar", SCALARS_TO_BOOL, Eq;
    GT_SCALAR, gt_scalar, executorch_prim::"gt.Scalar", SCALARS_TO_BOOL, Gt;
    LT_SCALAR, lt_scalar, executorch_prim::"lt.Scalar", SCALARS_TO_BOOL, Lt;
    GE_SCALAR, ge_scalar, executorch_prim::"ge.Scalar", SCALARS_TO_BOOL, Ge;
    LE_SCALAR, le_scalar, executorch_prim::"le.Scalar", SCALARS_TO_BOOL, Le;
    NEG_SCALAR, neg_scalar, executorch_prim::"neg.Scalar", SCALAR_TO_SCALAR, Neg;
    SYM_FLOAT, sym_float, executorch_prim::"sym_float.Scalar", SCALAR_TO_DOUBLE, SymFloat;
    SYM_INT, sym_int, executorch_prim::"sym_int.Scalar", SCALAR_TO_INT, SymInt;
    SYM_NOT, sym_not, executorch_prim::"sym_not.Scalar", SCALAR_TO_BOOL, SymNot;
    SYM_ITE, sym_ite, executorch_prim::"sym_ite.Scalar", TERNARY, SymIte;
    CEIL_SCALAR, ceil_scalar, executorch_prim::"ceil.Scalar", SCALAR_TO_INT, Ceil;
    ROUND_SCALAR, round_scalar, executorch_prim::"round.Scalar", SCALAR_TO_INT, Round;
    TRUNC_SCALAR, trunc_scalar, executorch_prim::"trunc.Scalar", SCALAR_TO_INT, Trunc;
}
