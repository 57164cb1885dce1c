//! The operators etch's load-time fusion writes, and the operators each one replaces:
//! the one table that et-runtime's fusion pass (which names them in the calls it writes)
//! and the selection (which keeps them when what they replace is selected) read. No
//! exporter writes them; et-ops registers their kernels (`conv::fused`), each an `out`
//! variant for float32.

/// A fused operator.
#[derive(Clone, Copy, Debug)]
pub struct FusedOperator {
    /// `namespace::name`; the overload is `out`.
    pub name: &'static str,
    /// The operators (`namespace::name.overload`) whose consecutive calls it replaces.
    pub replaces: &'static [&'static str],
}

const CONVOLUTION: &str = "aten::convolution.out";
const BATCH_NORM: &str = "aten::_native_batch_norm_legit_no_training.out";

/// A convolution and the inference batch norm of its output.
pub const CONVOLUTION_BATCH_NORM: FusedOperator = FusedOperator {
    name: "etch::convolution_batch_norm",
    replaces: &[CONVOLUTION, BATCH_NORM],
};

/// Then a `hardtanh` (ReLU6) of that.
pub const CONVOLUTION_BATCH_NORM_HARDTANH: FusedOperator = FusedOperator {
    name: "etch::convolution_batch_norm_hardtanh",
    replaces: &[CONVOLUTION, BATCH_NORM, "aten::hardtanh.out"],
};

/// Then a `relu` of that.
pub const CONVOLUTION_BATCH_NORM_RELU: FusedOperator = FusedOperator {
    name: "etch::convolution_batch_norm_relu",
    replaces: &[CONVOLUTION, BATCH_NORM, "aten::relu.out"],
};

/// Every fused operator.
pub const FUSED_OPERATORS: [FusedOperator; 3] = [
    CONVOLUTION_BATCH_NORM,
    CONVOLUTION_BATCH_NORM_HARDTANH,
    CONVOLUTION_BATCH_NORM_RELU,
];
