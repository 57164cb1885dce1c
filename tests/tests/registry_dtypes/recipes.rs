//! The hand-written arguments of the kernels the generic ones cannot reach, and the
//! kernels no call can exercise.

/// Arguments for kernels the generic ones do not reach (shapes that must agree, index
/// tensors, int64 outs), one token per argument, outs included: `T2x3` a tensor of the
/// dtype under test (`T0` 0-d), `L2` an int64 tensor of zeros (indices), `B2x3` a bool
/// tensor of trues, `F1x2x2x2` a float32 tensor of zeros, `I1` an int, `i1` an optional
/// int, `S1` a scalar, `D0.5` a double, `y`/`n` a bool, `N` none, `IL1,1` an int list,
/// `DL2` a double list, `TL2x3,2x3` and `LL1` tensor lists, `O` an out (in the dtypes
/// tried), `OL` an int64 out, `OTL` an out list of two.
pub(crate) const RECIPES: &[(&str, &str)] = &[
    ("aten::mm.out", "T2x3 T3x2 O"),
    ("aten::bmm.out", "T1x2x3 T1x3x2 O"),
    ("aten::addmm.out", "T2 T2x3 T3x2 S1 S1 O"),
    (
        "aten::convolution.out",
        "T1x1x4x4 T1x1x2x2 N IL1,1 IL0,0 IL1,1 n IL0,0 I1 O",
    ),
    // The fused kernels load-time fusion writes: the convolution's arguments, then the
    // batch norm's weight, bias, mean, variance and eps (then hardtanh's bounds).
    (
        "etch::convolution_batch_norm.out",
        "T1x1x4x4 T1x1x2x2 N IL1,1 IL0,0 IL1,1 n IL0,0 I1 T1 T1 T1 T1 D0.5 O",
    ),
    (
        "etch::convolution_batch_norm_hardtanh.out",
        "T1x1x4x4 T1x1x2x2 N IL1,1 IL0,0 IL1,1 n IL0,0 I1 T1 T1 T1 T1 D0.5 S0 S5 O",
    ),
    (
        "etch::convolution_batch_norm_relu.out",
        "T1x1x4x4 T1x1x2x2 N IL1,1 IL0,0 IL1,1 n IL0,0 I1 T1 T1 T1 T1 D0.5 O",
    ),
    ("aten::avg_pool2d.out", "T1x1x4x4 IL2,2 IL2,2 IL0,0 n y N O"),
    ("aten::_adaptive_avg_pool2d.out", "T1x1x4x4 IL2,2 O"),
    (
        "aten::max_pool2d_with_indices.out",
        "T1x1x4x4 IL2,2 IL2,2 IL0,0 IL1,1 n O OL",
    ),
    (
        "aten::max_pool2d_with_indices_backward.grad_input",
        "T1x1x2x2 T1x1x4x4 IL2,2 IL2,2 IL0,0 IL1,1 n L1x1x2x2 O",
    ),
    ("aten::permute_copy.out", "T2x3 IL1,0 O"),
    ("aten::view_copy.out", "T2x3 IL3,2 O"),
    ("aten::expand_copy.out", "T1x3 IL2,3 n O"),
    ("aten::repeat.out", "T2x3 IL2,1 O"),
    ("aten::index_select.out", "T2x3 I0 L1 O"),
    ("aten::gather.out", "T2x3 I1 L2x3 n O"),
    ("aten::scatter.src_out", "T2x3 I1 L2x3 T2x3 O"),
    ("aten::scatter.value_out", "T2x3 I1 L2x3 S1 O"),
    ("aten::scatter_add.out", "T2x3 I1 L2x3 T2x3 O"),
    ("aten::index.Tensor_out", "T2x3 LL1 O"),
    ("aten::index_put.out", "T2x3 LL1 T3 n O"),
    ("aten::index_put_", "T2x3 LL1 T3 n O"),
    ("aten::embedding.out", "T4x3 L2 I-1 n n O"),
    ("aten::where.self_out", "B2x3 T2x3 T2x3 O"),
    ("aten::masked_fill.Scalar_out", "T2x3 B2x3 S1 O"),
    ("aten::masked_select.out", "T2x3 B2x3 O"),
    ("aten::masked_scatter.out", "T2x3 B2x3 T2x3 O"),
    ("aten::clamp.out", "T2x3 S1 S5 O"),
    ("aten::clamp.Tensor_out", "T2x3 T2x3 T2x3 O"),
    ("aten::constant_pad_nd.out", "T2x3 IL1,1 S0 O"),
    ("aten::fill.Tensor_out", "T2x3 T0 O"),
    ("aten::topk.values", "T2x3 I2 I-1 y y O OL"),
    ("aten::max.dim_max", "T2x3 I1 n O OL"),
    ("aten::min.dim_min", "T2x3 I1 n O OL"),
    ("aten::argmax.out", "T2x3 i1 n OL"),
    ("aten::argmin.out", "T2x3 i1 n OL"),
    ("aten::nonzero.out", "T2x3 OL"),
    ("aten::native_layer_norm.out", "T2x3 IL3 N N D0.00001 O O O"),
    ("aten::upsample_nearest2d.vec_out", "T1x1x2x2 IL4,4 N O"),
    ("aten::upsample_bilinear2d.vec_out", "T1x1x2x2 IL4,4 n N O"),
    (
        "aten::_upsample_bilinear2d_aa.out",
        "T1x1x2x2 IL4,4 n N N O",
    ),
    ("aten::grid_sampler_2d.out", "T1x1x2x2 T1x2x2x2 I0 I0 n O"),
    ("aten::split_copy.Tensor_out", "T2x3 I1 I0 OTL"),
    ("aten::split_with_sizes_copy.out", "T2x3 IL1,1 I0 OTL"),
    ("aten::unbind_copy.int_out", "T2x3 I0 OTL"),
    ("aten::pixel_shuffle.out", "T1x4x1x1 I2 O"),
    ("aten::pixel_unshuffle.out", "T1x1x2x2 I2 O"),
    ("aten::reflection_pad1d.out", "T1x1x3 IL1,1 O"),
    ("aten::reflection_pad2d.out", "T1x1x3x3 IL1,1,1,1 O"),
    ("aten::reflection_pad3d.out", "T1x1x3x3x3 IL1,1,1,1,1,1 O"),
    ("aten::replication_pad1d.out", "T1x1x3 IL1,1 O"),
    ("aten::replication_pad2d.out", "T1x1x3x3 IL1,1,1,1 O"),
    ("aten::replication_pad3d.out", "T1x1x3x3x3 IL1,1,1,1,1,1 O"),
    ("aten::diagonal_copy.out", "T3x3 I0 I0 I1 O"),
    ("aten::select_scatter.out", "T2x3 T3 I0 I0 O"),
    ("aten::glu.out", "T2x4 I-1 O"),
    ("aten::repeat_interleave.Tensor_out", "L2 N O"),
    ("aten::native_dropout.out", "T2x3 D0.0 y O OB"),
    ("aten::copy_", "T2x3 T2x3 n O"),
    ("aten::_cdist_forward.out", "T2x3 T2x3 D2.0 N O"),
    ("aten::_pdist_forward.out", "T2x3 D2.0 O"),
    (
        "aten::convolution_backward.out",
        "T1x1x3x3 T1x1x4x4 T1x1x2x2 IL1 IL1,1 IL0,0 IL1,1 n IL0,0 I1 BL1,1,1 Os1x1x4x4 Os1x1x2x2 Os1",
    ),
    // The exporter passes outs the mask does not ask for as empty uint8 tensors.
    (
        "aten::convolution_backward.out",
        "T1x1x3x3 T1x1x4x4 T1x1x2x2 IL1 IL1,1 IL0,0 IL1,1 n IL0,0 I1 BL1,0,0 Os1x1x4x4 >uint8:1 >uint8:1",
    ),
    // Mixed dtypes PyTorch computes (bool operands promoted by an int64 one).
    ("aten::floor_divide.out", "T2x3 @int64:2x3 O"),
    ("aten::bitwise_left_shift.Tensor_out", "T2x3 @int64:2x3 O"),
    ("aten::bitwise_right_shift.Tensor_out", "T2x3 @int64:2x3 O"),
    ("aten::mean.out", "T2x3 IL1 n DT O"),
    ("aten::mean.dtype_out", "T2x3 DT O"),
    ("aten::repeat_interleave.Tensor_out", "T2 N O"),
    // Quantization: float inputs and quantized outs, or the reverse; scales are
    // float64 and zero points int64 tensors where they are tensors.
    ("quantized_decomposed::quantize_per_tensor.out", "T2x3 D0.5 I0 I0 I100 DT O"),
    (
        "quantized_decomposed::quantize_per_tensor.Tensor_out",
        "T2x3 @float64:1 @int64:1 I0 I100 DT O",
    ),
    (
        "quantized_decomposed::dequantize_per_tensor.out",
        "T2x3 D0.5 I0 I0 I100 ID N O",
    ),
    (
        "quantized_decomposed::dequantize_per_tensor.Tensor_out",
        "T2x3 @float64:1 @int64:1 I0 I100 ID N O",
    ),
    (
        "quantized_decomposed::quantize_per_channel.out",
        "T2x3 @float64:2 @int64:2 I0 I0 I100 DT O",
    ),
    (
        "quantized_decomposed::dequantize_per_channel.out",
        "T2x3 @float64:2 @int64:2 I0 I0 I100 ID N O",
    ),
    (
        "quantized_decomposed::quantize_per_token.out",
        "T2x3 @float64:2x1 @int64:2x1 I0 I100 DT O",
    ),
    (
        "quantized_decomposed::dequantize_per_token.out",
        "T2x3 @float64:2x1 @int64:2x1 I0 I100 ID DT O",
    ),
    (
        "quantized_decomposed::choose_qparams.Tensor_out",
        "T2x3 I0 I255 D0.00001 DT >float64:1 >int64:1",
    ),
    (
        "quantized_decomposed::choose_qparams_per_token_asymmetric.out",
        "T2x3 DT >float64:2x1 >int64:2x1",
    ),
    ("quantized_decomposed::embedding_byte.out", "T4x3 @out:4 N I0 I255 L2 O"),
    ("quantized_decomposed::embedding_byte.dtype_out", "T4x3 @float32:4 N I0 I255 L2 DT O"),
    ("quantized_decomposed::embedding_4bit.out", "T4x2 @out:4 N I-8 I7 L2 O"),
    ("quantized_decomposed::embedding_4bit.dtype_out", "T4x2 @float32:4 N I-8 I7 L2 DT O"),
    ("quantized_decomposed::embedding_2bit.out", "T4x1 @out:4 N I-2 I1 L2 O"),
    ("quantized_decomposed::embedding_2bit.dtype_out", "T4x1 @float32:4 N I-2 I1 L2 DT O"),
    ("quantized_decomposed::mixed_mm.out", "T2x3 @int8:3x2 T3 N O"),
    ("quantized_decomposed::mixed_linear.out", "T2x3 @int8:2x3 T2 N N O"),
    (
        "aten::native_group_norm.out",
        "T1x2x3 N N I1 I2 I3 I1 D0.00001 Os1x2x3 Os1x1 Os1x1",
    ),
    (
        "aten::_native_batch_norm_legit_no_training.out",
        "T1x2x2x2 N N T2 T2 D0.1 D0.00001 Os1x2x2x2 Os2 Os2",
    ),
    (
        "aten::_native_batch_norm_legit.no_stats_out",
        "T1x2x2x2 N N y D0.1 D0.00001 Os1x2x2x2 Os2 Os2",
    ),
    (
        "aten::_native_batch_norm_legit.out",
        "T1x2x2x2 N N T2 T2 n D0.1 D0.00001 Os1x2x2x2 Os2 Os2",
    ),
];

/// Kernels no call here can exercise, and why. Every other declared (kernel, dtype) pair
/// must run once.
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    (
        "aten::view_as_real_copy.out",
        "its inputs are complex, which `accepts` cannot name (it keeps every dtype) and \
         these tensors do not hold; the opcases run it",
    ),
    (
        "et_copy::_h2d_copy.out",
        "needs a device tensor; every etch tensor is in host memory (unit tests cover it)",
    ),
    (
        "et_copy::_d2h_copy.out",
        "needs a device tensor; every etch tensor is in host memory (unit tests cover it)",
    ),
];
