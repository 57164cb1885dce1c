"""etch: a Rust runtime for ExecuTorch ``.pte`` programs.

``etch.runtime`` mirrors ``executorch.runtime`` (``Runtime.get().load_program(...)``);
``etch.generate`` runs a program ExecuTorch's LLM exporter wrote. Errors are
:class:`EtchError` (a ``RuntimeError``), one subclass per ExecuTorch error code.
"""

from . import runtime
from ._etch import __version__
from .errors import (
    AccessFailedError,
    AlreadyLoadedError,
    DelegateInvalidCompatibilityError,
    DelegateInvalidHandleError,
    DelegateMemoryAllocationFailedError,
    EndOfMethodError,
    EtchError,
    InternalError,
    InvalidArgumentError,
    InvalidExternalDataError,
    InvalidProgramError,
    InvalidStateError,
    InvalidTypeError,
    MemoryAllocationFailedError,
    MethodNotFoundError,
    NotFoundError,
    NotImplementedError,
    NotSupportedError,
    OperatorMissingError,
    OutOfResourcesError,
    RegistrationAlreadyRegisteredError,
    RegistrationExceedingMaxKernelsError,
    TokenizerError,
)
from .llm import TextGenerator, generate, generate_stream
from .runtime import set_threads

__all__ = [
    "AccessFailedError",
    "AlreadyLoadedError",
    "DelegateInvalidCompatibilityError",
    "DelegateInvalidHandleError",
    "DelegateMemoryAllocationFailedError",
    "EndOfMethodError",
    "EtchError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidExternalDataError",
    "InvalidProgramError",
    "InvalidStateError",
    "InvalidTypeError",
    "MemoryAllocationFailedError",
    "MethodNotFoundError",
    "NotFoundError",
    "NotSupportedError",
    "OperatorMissingError",
    "OutOfResourcesError",
    "RegistrationAlreadyRegisteredError",
    "RegistrationExceedingMaxKernelsError",
    "TextGenerator",
    "TokenizerError",
    "__version__",
    "generate",
    "generate_stream",
    "runtime",
    "set_threads",
]
