"""etch's runtime behind ``executorch.runtime``'s API.

Code written for ExecuTorch runs on etch by changing the import::

    from etch.runtime import Runtime, Verification

    runtime = Runtime.get()
    program = runtime.load_program("model.pte", verification=Verification.Minimal)
    print(program.method_names)              # {'forward'}
    forward = program.load_method("forward")
    outputs = forward.execute((torch.ones(2, 2), torch.ones(2, 2)))

Inputs are torch tensors, NumPy arrays (or anything ``numpy.asarray`` takes) and the
scalars a method takes (bool, int, float, None). Outputs are a list: torch tensors when
any input was a torch tensor (what ExecuTorch returns), NumPy arrays otherwise, so NumPy
code needs no torch. An input array that is C-contiguous and of the method's dtype is
read where it lies (a torch tensor through ``Tensor.numpy()``, over the same memory);
each output is an array over the memory etch copied it into.
"""

from __future__ import annotations

import enum
import functools
import os
import sys
from collections import abc
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Set, Tuple, Union

import numpy as np

from . import _etch
from .errors import InvalidArgumentError, MethodNotFoundError, NotSupportedError

__all__ = [
    "BackendRegistry",
    "Method",
    "MethodMeta",
    "OperatorRegistry",
    "Program",
    "Runtime",
    "TensorInfo",
    "Verification",
    "set_threads",
    "get_threads",
]

PathLike = Union[str, "os.PathLike[str]"]


class Verification(enum.Enum):
    """How much of a program is checked when it loads (ExecuTorch's
    ``Program::Verification``). Either way a malformed file is an error, never a crash:
    every read is bounds-checked; ``Minimal`` finds damage when the damaged part is
    read instead of up front."""

    Minimal = 0
    InternalConsistency = 1


# ExecuTorch's ScalarType names, by code (TensorInfo's repr shows them).
_DTYPE_NAMES = (
    "Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "ComplexHalf",
    "ComplexFloat", "ComplexDouble", "Bool", "QInt8", "QUInt8", "QInt32", "BFloat16",
    "QUInt4x2", "QUInt2x4", "Bits1x8", "Bits2x4", "Bits4x2", "Bits8", "Bits16",
    "Float8_e5m2", "Float8_e4m3fn", "Float8_e5m2fnuz", "Float8_e4m3fnuz", "UInt16",
    "UInt32", "UInt64",
)  # fmt: skip


class TensorInfo:
    """A tensor input's or output's shape and dtype (ExecuTorch's ``TensorInfo``)."""

    __slots__ = ("_sizes", "_dtype", "_planned", "_nbytes")

    def __init__(self, sizes: Sequence[int], dtype: int, planned: bool, nbytes: int) -> None:
        self._sizes = tuple(sizes)
        self._dtype = dtype
        self._planned = planned
        self._nbytes = nbytes

    def sizes(self) -> Tuple[int, ...]:
        """The exported sizes (for a bounded dynamic shape, the upper bound)."""
        return self._sizes

    def dtype(self) -> int:
        """ExecuTorch's ScalarType code (6 is Float)."""
        return self._dtype

    def is_memory_planned(self) -> bool:
        """Whether the tensor lives in the method's planned memory."""
        return self._planned

    def nbytes(self) -> int:
        """Bytes of data at the exported sizes."""
        return self._nbytes

    def __repr__(self) -> str:
        name = _DTYPE_NAMES[self._dtype] if 0 <= self._dtype < len(_DTYPE_NAMES) else self._dtype
        return (
            f"TensorInfo(sizes={list(self._sizes)}, dtype={name}, "
            f"is_memory_planned={self._planned}, nbytes={self._nbytes})"
        )


_Info = Optional[Tuple[List[int], int, bool, int]]


class MethodMeta:
    """A method's inputs and outputs (ExecuTorch's ``MethodMeta``)."""

    __slots__ = ("_name", "_inputs", "_outputs")

    def __init__(self, name: str, inputs: List[_Info], outputs: List[_Info]) -> None:
        self._name = name
        self._inputs = [TensorInfo(*i) if i is not None else None for i in inputs]
        self._outputs = [TensorInfo(*o) if o is not None else None for o in outputs]

    def name(self) -> str:
        """The method's name, such as ``'forward'``."""
        return self._name

    def num_inputs(self) -> int:
        """The number of user inputs (not counting weights or internal buffers)."""
        return len(self._inputs)

    def num_outputs(self) -> int:
        """The number of outputs (not counting mutated internal buffers)."""
        return len(self._outputs)

    def num_attributes(self) -> int:
        """The number of attribute tensors: etch exposes none."""
        return 0

    def input_tensor_meta(self, index: int) -> TensorInfo:
        """Input ``index``'s tensor info; ``IndexError`` outside ``[0, num_inputs())``."""
        return self._meta(self._inputs, "input", index)

    def output_tensor_meta(self, index: int) -> TensorInfo:
        """Output ``index``'s tensor info; ``IndexError`` outside ``[0, num_outputs())``."""
        return self._meta(self._outputs, "output", index)

    def attribute_tensor_meta(self, index: int) -> TensorInfo:
        """Attribute tensors are not exposed: always ``IndexError``."""
        raise IndexError(f"Cannot get attribute tensor meta at {index}")

    def _meta(self, infos: List[Optional[TensorInfo]], kind: str, index: int) -> TensorInfo:
        if not 0 <= index < len(infos):
            raise IndexError(f"Cannot get {kind} tensor meta at {index}")
        info = infos[index]
        if info is None:
            raise InvalidArgumentError(
                f"{kind} {index} of method `{self._name}` is not a tensor"
            )
        return info

    def __repr__(self) -> str:
        def infos(xs: List[Optional[TensorInfo]]) -> List[str]:
            return [repr(x) for x in xs if x is not None]

        return (
            f"MethodMeta(name='{self._name}', num_inputs={self.num_inputs()}, "
            f"input_tensor_meta={infos(self._inputs)}, num_outputs={self.num_outputs()}, "
            f"output_tensor_meta={infos(self._outputs)})"
        )


def _torch_module() -> Any:
    """torch, if the application imported it (etch never imports it itself)."""
    return sys.modules.get("torch")


def _prepare(inputs: Sequence[Any]) -> Tuple[Tuple[Any, ...], bool]:
    """The inputs as the extension reads them (C-contiguous NumPy arrays, a dtype name
    beside one NumPy lacks, scalars), and whether any was a torch tensor."""
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, abc.Sequence):
        raise InvalidArgumentError(
            f"inputs must be a sequence (a list or tuple) of values, not {type(inputs).__name__}"
        )
    torch = _torch_module()
    prepared: List[Any] = []
    any_torch = False
    for i, x in enumerate(inputs):
        if torch is not None and isinstance(x, torch.Tensor):
            any_torch = True
            t = x.detach()
            if t.device.type != "cpu":
                t = t.cpu()
            t = t.resolve_conj().resolve_neg().contiguous()
            if t.dtype == torch.bfloat16:
                prepared.append((t.view(torch.int16).numpy(), "bfloat16"))
            else:
                # Over the tensor's memory: no copy.
                prepared.append(t.numpy())
        elif x is None or isinstance(x, (bool, int, float)):
            prepared.append(x)
        elif isinstance(x, (np.ndarray, memoryview)) or hasattr(x, "__array__"):
            a = np.asarray(x)
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            prepared.append(a)
        else:
            raise InvalidArgumentError(
                f"input {i}: unsupported type {type(x).__name__}: give a torch tensor, a "
                "NumPy array, or a bool, int, float or None"
            )
    return tuple(prepared), any_torch


def _output(value: Any, as_torch: bool) -> Any:
    """An output as NumPy (or torch): tensors wrap etch's memory without a copy."""
    if not isinstance(value, _etch._Tensor):
        return value
    array = np.asarray(value)
    if as_torch:
        torch = _torch_module()
        if value.dtype == "bfloat16":
            return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(array)
    if value.dtype == "bfloat16":
        # NumPy has no bfloat16: its values, exactly, as float32.
        return (array.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return array


class Method:
    """A method of a loaded program (ExecuTorch's ``Method``)."""

    def __init__(self, program: "Program", name: str) -> None:
        self._program = program
        self._name = name

    def execute(self, inputs: Sequence[Any]) -> List[Any]:
        """Runs the method on ``inputs`` (all of them, in order) and returns its outputs.

        The interpreter's lock is released while the method runs, so other Python
        threads go on; one program runs one call at a time.
        """
        prepared, as_torch = _prepare(inputs)
        outputs = self._program._program.execute(self._name, prepared)
        return [_output(o, as_torch) for o in outputs]

    def __call__(self, inputs: Sequence[Any]) -> List[Any]:
        return self.execute(inputs)

    @property
    def metadata(self) -> MethodMeta:
        """The method's inputs and outputs."""
        return self._program.metadata(self._name)

    def reset(self) -> None:
        """Starts the method's mutable state (a KV cache, running statistics) over from
        the program's initial values. (etch only.)"""
        self._program._program.reset(self._name)

    def __repr__(self) -> str:
        return f"Method(name='{self._name}')"


class Program:
    """A loaded program (ExecuTorch's ``Program``): its method names, metadata and
    methods."""

    def __init__(self, program: Any, data: Optional[bytes]) -> None:
        # The bytes the program was read from; etch copies them, so this is only for
        # parity with ExecuTorch's attribute.
        self._data = data
        self._program = program
        self._names: List[str] = list(program.method_names())
        self._methods: Dict[str, Method] = {}

    @property
    def method_names(self) -> Set[str]:
        """The program's method names."""
        return set(self._names)

    def load_method(self, name: str) -> Method:
        """Loads method ``name`` (delegates initialize now) and returns it; loaded once
        and cached. A name the program lacks raises :class:`etch.MethodNotFoundError`,
        a ``KeyError`` as with ExecuTorch."""
        method = self._methods.get(name)
        if method is None:
            if name not in self._names:
                listed = ", ".join(f"`{n}`" for n in self._names)
                raise MethodNotFoundError(
                    f"the program has no method `{name}`; its methods are {listed}"
                )
            self._program.load_method(name)
            method = Method(self, name)
            self._methods[name] = method
        return method

    def metadata(self, method_name: str) -> MethodMeta:
        """Method ``method_name``'s metadata, without loading it."""
        return MethodMeta(*self._program.method_meta(method_name))

    def set_threads(self, threads: int) -> None:
        """Runs this program's kernels on ``threads`` threads (1: the calling thread).
        (etch only; outputs are the same for any count.)"""
        self._program.set_threads(threads)

    def write_etdump_result_to_file(self, etdump_path: str, debug_buffer_path: str) -> None:
        """Not available from Python: ``etch run --etdump FILE`` writes ETDumps."""
        raise NotSupportedError(
            "etch.runtime does not record ETDumps; `etch run MODEL --etdump FILE` writes one"
        )


class BackendRegistry:
    """The backends linked into etch (ExecuTorch's ``BackendRegistry``)."""

    @property
    def registered_backend_names(self) -> List[str]:
        """The registered backends' names (``XnnpackBackend``)."""
        return list(_etch.backend_names())

    def is_available(self, backend_name: str) -> bool:
        """Whether ``backend_name`` is registered."""
        return backend_name in _etch.backend_names()


class OperatorRegistry:
    """The operators with a kernel linked into etch (ExecuTorch's
    ``OperatorRegistry``)."""

    @property
    def operator_names(self) -> Set[str]:
        """The operators' names (``aten::add.out``, ...)."""
        return set(_etch.operator_names())


_default_threads = 1


def set_threads(threads: int) -> None:
    """Kernel threads for programs loaded from now on (default 1; see
    ``Program.set_threads`` for one already loaded). Plays the part of ExecuTorch's
    ``_unsafe_reset_threadpool``."""
    global _default_threads
    if threads < 1:
        raise InvalidArgumentError("threads must be at least 1")
    _default_threads = int(threads)


def get_threads() -> int:
    """The kernel threads programs loaded from now on get."""
    return _default_threads


def _verification(v: Any) -> bool:
    """Whether ``v`` asks for the minimal verification. ExecuTorch's own enum values are
    taken too, by name."""
    name = getattr(v, "name", None)
    if name == "Minimal":
        return True
    if name == "InternalConsistency":
        return False
    raise InvalidArgumentError(f"verification must be a Verification, not {v!r}")


def _data_files(data_path: Any) -> List[str]:
    if data_path is None:
        return []
    if isinstance(data_path, (str, bytes, os.PathLike)):
        return [os.fsdecode(data_path)]
    return [os.fsdecode(p) for p in data_path]


class Runtime:
    """The runtime (ExecuTorch's ``Runtime``): loads programs. ``Runtime.get()`` is the
    one instance."""

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def get() -> "Runtime":
        """The runtime."""
        return Runtime()

    def __init__(self) -> None:
        self.backend_registry = BackendRegistry()
        self.operator_registry = OperatorRegistry()

    def load_program(
        self,
        data: Union[bytes, bytearray, BinaryIO, Path, str],
        *,
        verification: Verification = Verification.InternalConsistency,
        enable_etdump: bool = False,
        debug_buffer_size: int = 0,
        data_path: Optional[Union[PathLike, Sequence[PathLike]]] = None,
    ) -> Program:
        """Loads a program from a ``.pte`` path (mapped, not read), bytes, a bytearray
        or a binary file object. ``data_path`` names a ``.ptd`` data file with the
        program's external weights, or (etch only) a list of them, searched in order.
        """
        if enable_etdump:
            raise NotSupportedError(
                "etch.runtime does not record ETDumps; `etch run MODEL --etdump FILE` "
                "writes one"
            )
        minimal = _verification(verification)
        files = _data_files(data_path)
        raw: Optional[bytes] = None
        if isinstance(data, (str, os.PathLike)):
            program = _etch._Program.open(os.fspath(data), files, minimal)
        else:
            if isinstance(data, bytes):
                raw = data
            elif isinstance(data, (bytearray, memoryview)):
                raw = bytes(data)
            elif hasattr(data, "read"):
                raw = data.read()
            else:
                raise TypeError(
                    "Expected data to be bytes, bytearray, a path to a .pte file, or a "
                    f"file-like object, but got {type(data).__name__}."
                )
            program = _etch._Program.from_bytes(raw, files, minimal)
        if _default_threads > 1:
            program.set_threads(_default_threads)
        return Program(program, raw)
