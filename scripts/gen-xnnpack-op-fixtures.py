#!/usr/bin/env python3
"""Writes the small XNNPACK node-kind fixtures of tests/fixtures/xnnpack_ops/.

Each case is a tiny fp32 (or PT2E-quantized) module exported with torch.export, lowered
with ExecuTorch's XnnpackPartitioner (to_edge_transform_and_lower) and run by ExecuTorch's
own runtime (executorch.runtime) for the expected outputs. Run with the venv that has
executorch 1.5.1 and torch:

    python scripts/gen-xnnpack-op-fixtures.py tests/fixtures/xnnpack_ops

Inputs come from a fixed seed, so reruns give the same files (up to the exporter's
version).
"""

import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F
import yaml
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class Pad(torch.nn.Module):
    def forward(self, x, y):
        # 4-D (channels-last inside the delegate after a conv) and 3-D pads.
        a = F.pad(x, (1, 2, 0, 3), value=-1.5)
        b = F.pad(y, (2, 0, 1, 1, 0, 2), value=0.25)
        return a * 2.0, b + 1.0


class PadConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(F.pad(x, (1, 1, 2, 0), value=0.5))


class ResizeHalfPixel(torch.nn.Module):
    def forward(self, x):
        up = F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False)
        down = F.interpolate(x, size=(3, 2), mode="bilinear", align_corners=False)
        twice = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
        return up, down, twice


class ResizeAlignCorners(torch.nn.Module):
    def forward(self, x):
        up = F.interpolate(x, size=(9, 11), mode="bilinear", align_corners=True)
        # One-pixel output dims.
        row = F.interpolate(x, size=(1, 6), mode="bilinear", align_corners=True)
        col = F.interpolate(x, size=(5, 1), mode="bilinear", align_corners=True)
        return up, row, col


class UnaryMath(torch.nn.Module):
    def forward(self, x):
        p = torch.abs(x) + 0.1
        return (
            -x,
            x * x,
            torch.pow(x, 2),
            torch.sqrt(p),
            torch.rsqrt(p),
            torch.abs(x),
            torch.floor(x),
            torch.ceil(x),
            torch.log(p),
            torch.exp(x),
            torch.sin(x),
            torch.cos(x),
        )


class BinaryMath(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.prelu = torch.nn.PReLU(4, init=0.1)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.tensor([0.1, -0.2, 0.5, 2.0]))

    def forward(self, x, y):
        return torch.minimum(x, y), torch.maximum(x, y[:, :, :1]), self.prelu(x)


class Slice(torch.nn.Module):
    def forward(self, x):
        return x[:, 1:3, :, 2:] * 1.5, x[:, :, 1:4, :] + 1.0


class ConvTranspose(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.b = torch.nn.ConvTranspose2d(6, 4, (2, 3), stride=(1, 2), groups=2, dilation=(2, 1))

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class SharedLinear(torch.nn.Module):
    """One Linear applied at every step of a short recurrence (as an unrolled RNN does):
    several FullyConnected nodes share one filter, each packing its own copy."""

    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(24, 40)
        self.rec = torch.nn.Linear(40, 40)

    def forward(self, x):
        h = torch.zeros(1, 40)
        for t in range(x.shape[1]):
            h = torch.relu(self.inp(x[:, t]) + self.rec(h))
        return h


def quantized_slice_pad():
    """A PT2E-quantized conv -> slice -> conv: the slice runs on qint8 inside the
    delegate."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3)
            self.c2 = torch.nn.Conv2d(8, 4, 1)

        def forward(self, x):
            y = self.c1(x)
            y = y[:, :, 1:5, 2:]
            return self.c2(y)

    x = torch.randn(1, 3, 9, 9)
    ep = torch.export.export(M().eval(), (x,))
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    m = prepare_pt2e(ep.module(), q)
    m(x)
    m = convert_pt2e(m)
    return m, (x,)


def pt2e_quantize(module, inputs):
    """`module` PT2E-quantized with XNNPACK's symmetric per-channel configuration,
    calibrated on `inputs`."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    ep = torch.export.export(module.eval(), inputs)
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    m = prepare_pt2e(ep.module(), q)
    m(*inputs)
    return convert_pt2e(m)


class QuantizedCat(torch.nn.Module):
    """A miniature DenseNet block: each layer (batch norm, ReLU, conv) sees the
    concatenation of all the features before it. The partitioner leaves those cats
    outside the delegates, on qint8 tensors, so quantized tensors cross the delegates'
    boundaries."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Sequential(
                torch.nn.BatchNorm2d(3 + 2 * i), torch.nn.ReLU(), torch.nn.Conv2d(3 + 2 * i, 2, 3, padding=1)
            )
            for i in range(3)
        )

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(torch.cat(features, dim=1)))
        return torch.cat(features, dim=1)


class QuantizedMaskAdd(torch.nn.Module):
    """Scores plus an additive attention mask of float32's lowest value where masked
    (as Hugging Face encoders build it): the quantized Add's mask scale dwarfs the
    scores', a scale ratio far under XNNPACK's fixed-point range."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 4)

    def forward(self, x, keep):
        mask = (1.0 - keep) * torch.finfo(torch.float32).min
        return self.out(self.q(x) + mask)


def quantized_pad():
    """A PT2E-quantized conv -> pad -> conv whose pad shares its input's parameters (as
    XNNPACK's byte-copying pad needs). ExecuTorch 1.5.1's ConstantPadConfig offers only
    FP32, so while lowering this case the script lets it take STATIC_QUANT too: the pad
    then runs on qint8 in ExecuTorch's XNNPACK, which gives the reference."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer import (
        QuantizationAnnotation,
        SharedQuantizationSpec,
    )

    class Quantizer(XNNPACKQuantizer):
        def annotate(self, model):
            model = super().annotate(model)
            for n in model.graph.nodes:
                if n.target == torch.ops.aten.pad.default:
                    src = n.args[0]
                    n.meta["quantization_annotation"] = QuantizationAnnotation(
                        input_qspec_map={src: SharedQuantizationSpec(src)},
                        output_qspec=SharedQuantizationSpec((src, n)),
                        _annotated=True,
                    )
            return model

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3)
            self.c2 = torch.nn.Conv2d(8, 4, 1)

        def forward(self, x):
            return self.c2(F.pad(self.c1(x), (1, 2, 0, 1), value=0.3))

    x = torch.randn(1, 3, 8, 8)
    ep = torch.export.export(M().eval(), (x,))
    q = Quantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    m = prepare_pt2e(ep.module(), q)
    m(x)
    return convert_pt2e(m), (x,)


def lower_with_quantized_pad(module, inputs):
    from executorch.backends.xnnpack.partition.config.generic_node_configs import (
        ConstantPadConfig,
    )
    from executorch.backends.xnnpack.partition.config.xnnpack_config import (
        ConfigPrecisionType,
    )

    original = ConstantPadConfig.supported_precision_types
    ConstantPadConfig.supported_precision_types = lambda self: [
        ConfigPrecisionType.FP32,
        ConfigPrecisionType.STATIC_QUANT,
    ]
    try:
        return lower(module, inputs, quantized=True)
    finally:
        ConstantPadConfig.supported_precision_types = original


CASES = {
    "pad": (Pad(), lambda: (torch.randn(1, 3, 4, 5), torch.randn(2, 3, 4)), 1e-6),
    "pad_conv": (PadConv(), lambda: (torch.randn(1, 3, 6, 6),), 1e-4),
    "resize_half_pixel": (ResizeHalfPixel(), lambda: (torch.randn(1, 3, 4, 5),), 1e-5),
    "resize_align_corners": (ResizeAlignCorners(), lambda: (torch.randn(2, 2, 4, 5),), 1e-5),
    "unary_math": (UnaryMath(), lambda: (torch.randn(2, 3, 5) * 2,), 1e-5),
    "binary_math": (BinaryMath(), lambda: (torch.randn(1, 4, 3, 5), torch.randn(1, 4, 3, 5)), 1e-6),
    "slice": (Slice(), lambda: (torch.randn(1, 4, 5, 6),), 1e-6),
    "conv_transpose": (ConvTranspose(), lambda: (torch.randn(1, 4, 5, 6),), 1e-4),
    "shared_linear": (SharedLinear(), lambda: (torch.randn(1, 6, 24),), 1e-4),
}


def lower(module, inputs, quantized=False):
    ep = torch.export.export(module if quantized else module.eval(), inputs)
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    return edge.to_executorch().buffer


def write_case(out_dir, name, program, inputs, tol):
    (out_dir / f"{name}.pte").write_bytes(program)
    method = Runtime.get().load_program(program).load_method("forward")
    outputs = method.execute(list(inputs))
    spec = {"program": f"{name}.pte", "method": "forward", "rtol": tol, "atol": tol}
    for kind, tensors in (("in", inputs), ("out", outputs)):
        entries = []
        for i, t in enumerate(tensors):
            a = t.detach().contiguous().numpy()
            file = f"{name}.{kind}{i}.bin"
            (out_dir / file).write_bytes(a.astype(a.dtype.newbyteorder("<")).tobytes())
            entries.append({"dtype": str(a.dtype), "sizes": list(a.shape), "file": file})
        spec["inputs" if kind == "in" else "outputs"] = entries
    (out_dir / f"{name}.io.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    print(name, len(program), "bytes")


def main():
    out_dir = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/xnnpack_ops")
    out_dir.mkdir(parents=True, exist_ok=True)
    only = set(sys.argv[2:])
    for name, (module, make_inputs, tol) in CASES.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        inputs = make_inputs()
        write_case(out_dir, name, lower(module, inputs), inputs, tol)
    if not only or "slice_qint8" in only:
        torch.manual_seed(0)
        module, inputs = quantized_slice_pad()
        # Integer arithmetic: within two output steps of ExecuTorch's.
        write_case(out_dir, "slice_qint8", lower(module, inputs, quantized=True), inputs, 0.05)
    if not only or "cat_qint8" in only:
        torch.manual_seed(0)
        inputs = (torch.randn(1, 3, 6, 6),)
        module = pt2e_quantize(QuantizedCat(), inputs)
        write_case(out_dir, "cat_qint8", lower(module, inputs, quantized=True), inputs, 0.05)
    if not only or "mask_add_qint8" in only:
        torch.manual_seed(0)
        keep = torch.ones(1, 5, 8)
        keep[..., 6:] = 0.0
        inputs = (torch.randn(1, 5, 8), keep)
        module = pt2e_quantize(QuantizedMaskAdd(), inputs)
        write_case(out_dir, "mask_add_qint8", lower(module, inputs, quantized=True), inputs, 0.05)
    if not only or "pad_qint8" in only:
        torch.manual_seed(0)
        module, inputs = quantized_pad()
        write_case(out_dir, "pad_qint8", lower_with_quantized_pad(module, inputs), inputs, 0.05)


if __name__ == "__main__":
    np.random.seed(0)
    main()
