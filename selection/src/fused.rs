//! The operators etch's load-time fusion writes (et-ops' `conv::fused`, et-runtime's
//! `method::fusion`), and the operators each one replaces. No program names them, so a
//! selection made from programs or ExecuTorch's files never would: each is selected when
//! every operator it replaces is selected for float32 (its only dtype), so that a
//! selective build keeps the fusion of the programs it was made for.

/// `(fused operator, the operators it replaces)`.
const FUSED: &[(&str, &[&str])] = &[
    (
        "etch::convolution_batch_norm.out",
        &[
            "aten::convolution.out",
            "aten::_native_batch_norm_legit_no_training.out",
        ],
    ),
    (
        "etch::convolution_batch_norm_hardtanh.out",
        &[
            "aten::convolution.out",
            "aten::_native_batch_norm_legit_no_training.out",
            "aten::hardtanh.out",
        ],
    ),
    (
        "etch::convolution_batch_norm_relu.out",
        &[
            "aten::convolution.out",
            "aten::_native_batch_norm_legit_no_training.out",
            "aten::relu.out",
        ],
    ),
];

/// The operators fused operator `op` replaces, if it is one.
pub(crate) fn replaced_by(op: &str) -> Option<&'static [&'static str]> {
    FUSED
        .iter()
        .find(|(f, _)| *f == op)
        .map(|&(_, parts)| parts)
}
