"""etch's errors as Python exceptions.

Every error etch raises is an :class:`EtchError`, a ``RuntimeError`` (what
``executorch.runtime`` raises for every runtime failure), so code written for ExecuTorch
catches it unchanged. Each of ExecuTorch's error codes has its own subclass, named after
the code (``InvalidArgument`` is :class:`InvalidArgumentError`), which also derives from
the built-in exception that says the same where there is one (``ValueError`` for a bad
argument or program, ``TypeError`` for a value of the wrong type, ``LookupError`` for a
missing item, ``MemoryError`` for a failed allocation). ``code`` is ExecuTorch's numeric
code and ``str(e)`` the message the ``etch`` command prints.
"""

from __future__ import annotations

import builtins
from typing import Dict, Optional, Type

__all__ = [
    "EtchError",
    "InternalError",
    "InvalidStateError",
    "EndOfMethodError",
    "AlreadyLoadedError",
    "NotSupportedError",
    "InvalidArgumentError",
    "InvalidTypeError",
    "OperatorMissingError",
    "RegistrationExceedingMaxKernelsError",
    "RegistrationAlreadyRegisteredError",
    "NotFoundError",
    "MemoryAllocationFailedError",
    "AccessFailedError",
    "InvalidProgramError",
    "InvalidExternalDataError",
    "OutOfResourcesError",
    "DelegateInvalidCompatibilityError",
    "DelegateMemoryAllocationFailedError",
    "DelegateInvalidHandleError",
    "MethodNotFoundError",
    "TokenizerError",
]


class EtchError(RuntimeError):
    """An etch failure: ExecuTorch's error ``code`` (``None`` outside its codes) and the
    message the ``etch`` command prints."""

    #: ExecuTorch's numeric error code, as ``executorch/runtime/core/error.h`` numbers it.
    code: Optional[int] = None

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    @property
    def code_name(self) -> Optional[str]:
        """ExecuTorch's name for the code (``"InvalidArgument"``), if there is one."""
        return _NAMES.get(self.code) if self.code is not None else None

    def __str__(self) -> str:
        # KeyError, a base of MethodNotFoundError, would show the message's repr.
        return self.message


class InternalError(EtchError):
    """An internal invariant was broken (also: a Rust panic, caught)."""

    code = 0x01


class InvalidStateError(EtchError):
    """The object is not in a state that allows the call."""

    code = 0x02


class EndOfMethodError(EtchError):
    """A step ran past the method's last instruction."""

    code = 0x03


class AlreadyLoadedError(EtchError):
    """The object was already loaded."""

    code = 0x04


class NotSupportedError(EtchError):
    """The operation is not supported by this build or this program."""

    code = 0x10


class NotImplementedError(EtchError, builtins.NotImplementedError):  # noqa: A001
    """The operation is not implemented."""

    code = 0x11


class InvalidArgumentError(EtchError, ValueError):
    """An argument was out of range or of the wrong shape or dtype."""

    code = 0x12


class InvalidTypeError(EtchError, TypeError):
    """A value had the wrong type."""

    code = 0x13


class OperatorMissingError(EtchError):
    """No registered kernel serves one of the program's operator calls."""

    code = 0x14


class RegistrationExceedingMaxKernelsError(EtchError):
    """Kept for ExecuTorch's code; etch's kernel registry has no capacity."""

    code = 0x15


class RegistrationAlreadyRegisteredError(EtchError):
    """Two kernels were registered under the same name and dtypes."""

    code = 0x16


class NotFoundError(EtchError, LookupError):
    """A method, input, backend or named item does not exist."""

    code = 0x20


class MemoryAllocationFailedError(EtchError, MemoryError):
    """Memory could not be had (or a method's buffers are over the limit)."""

    code = 0x21


class AccessFailedError(EtchError):
    """A file could not be opened or read."""

    code = 0x22


class InvalidProgramError(EtchError, ValueError):
    """The program is malformed."""

    code = 0x23


class InvalidExternalDataError(EtchError, ValueError):
    """A ``.ptd`` data file does not match the program."""

    code = 0x24


class OutOfResourcesError(EtchError):
    """A resource limit was exceeded."""

    code = 0x25


class DelegateInvalidCompatibilityError(EtchError):
    """A delegate's payload is incompatible with its backend."""

    code = 0x30


class DelegateMemoryAllocationFailedError(EtchError, MemoryError):
    """A backend could not allocate memory."""

    code = 0x31


class DelegateInvalidHandleError(EtchError):
    """A backend handle was invalid."""

    code = 0x32


class MethodNotFoundError(InvalidArgumentError, KeyError):
    """``Program.load_method`` of a name the program lacks: a ``KeyError``, as
    ``executorch.runtime`` raises there, and etch's ``InvalidArgument``."""


class TokenizerError(EtchError, ValueError):
    """A tokenizer file etch cannot read, or text or tokens it cannot encode or decode."""


_BY_CODE: Dict[int, Type[EtchError]] = {
    cls.code: cls  # type: ignore[misc]
    for cls in (
        InternalError,
        InvalidStateError,
        EndOfMethodError,
        AlreadyLoadedError,
        NotSupportedError,
        NotImplementedError,
        InvalidArgumentError,
        InvalidTypeError,
        OperatorMissingError,
        RegistrationExceedingMaxKernelsError,
        RegistrationAlreadyRegisteredError,
        NotFoundError,
        MemoryAllocationFailedError,
        AccessFailedError,
        InvalidProgramError,
        InvalidExternalDataError,
        OutOfResourcesError,
        DelegateInvalidCompatibilityError,
        DelegateMemoryAllocationFailedError,
        DelegateInvalidHandleError,
    )
}

_NAMES: Dict[int, str] = {code: cls.__name__[: -len("Error")] for code, cls in _BY_CODE.items()}


def _from_code(code: Optional[int], message: str, tokenizer: bool = False) -> EtchError:
    """The exception for an error code (called by the extension module)."""
    if tokenizer:
        return TokenizerError(message)
    if code is None:
        return EtchError(message)
    cls = _BY_CODE.get(code)
    return cls(message) if cls is not None else EtchError(message, code)
