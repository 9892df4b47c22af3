# SPDX-License-Identifier: MIT
"""egpu.Error and one subclass per EGPU_E* code of the C API."""

from . import _egpu as _c


class Error(Exception):
    """A libegpu failure: ``code`` is the negative EGPU_E* value (None
    where the C call reports none: a constructor that returned NULL) and
    ``message`` egpu_errmsg()'s text, naming what failed and where."""

    code = None

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return self.message


class InvalidArgument(Error, ValueError):
    code = _c.EGPU_EINVAL


class NoMemory(Error):
    code = _c.EGPU_ENOMEM


class IOFailure(Error):
    """A file could not be read or written."""
    code = _c.EGPU_EIO


class FormatError(Error):
    """Malformed input: ELF, instructions, PTX."""
    code = _c.EGPU_EFORMAT


class VerifyError(Error):
    """A program was refused as unsafe."""
    code = _c.EGPU_EVERIFY


class JitError(Error):
    code = _c.EGPU_EJIT


class NoDevice(Error):
    """No CUDA driver or no GPU."""
    code = _c.EGPU_ENODEV


class NotFound(Error, KeyError):
    """No such program, map, kernel or key; a KeyError, so ``in`` and
    ``dict.get`` style code works on maps."""
    code = _c.EGPU_ENOENT


class Full(Error):
    """A map or buffer is full or too small (EGPU_E2BIG)."""
    code = _c.EGPU_E2BIG


class CudaError(Error):
    code = _c.EGPU_ECUDA


class NotSupported(Error):
    code = _c.EGPU_ENOTSUP


class Exists(Error):
    """The key exists and NOEXIST was asked."""
    code = _c.EGPU_EEXIST


class Busy(Error):
    """The resource is in use: another trace runs in this process."""
    code = _c.EGPU_EBUSY


_BY_CODE = {cls.code: cls for cls in Error.__subclasses__()}


def make_error(code, message):
    """The exception for ``code`` (0: not known) carrying ``message``."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return Error(message, code or None)
    return cls(message)


_c.set_error_factory(make_error)
