# SPDX-License-Identifier: MIT
"""User helpers written in Python: the signature string of a callable,
from its type annotations (docs/helpers.md, Python and Go)."""

import inspect
import typing

from ._errors import InvalidArgument

_SPEC_HELP = ("annotate every argument int, Annotated[bytes, N] or "
              "Annotated[bytearray, N] and the return int or None, "
              "or pass signature=\"RET (ARG, ...)\"")


def _arg_spec(name, hint):
    if hint is int:
        return "u64"
    if typing.get_origin(hint) is typing.Annotated:
        base, *meta = typing.get_args(hint)
        if base in (bytes, bytearray) and len(meta) == 1 and isinstance(meta[0], int):
            return f"{'const ' if base is bytes else ''}u8[{meta[0]}]"
    raise InvalidArgument(f"helper argument '{name}' is annotated {hint!r}: {_SPEC_HELP}")


def signature_of(fn):
    """The signature string of ``fn``'s annotations: int is u64,
    Annotated[bytes, N] const u8[N] (the function gets a copy),
    Annotated[bytearray, N] u8[N] (what it leaves there is written back);
    a None return is void, an int return u64."""
    try:
        params = inspect.signature(fn).parameters.values()
        hints = typing.get_type_hints(fn, include_extras=True)
    except (TypeError, ValueError, NameError) as e:
        raise InvalidArgument(f"cannot read the annotations of {fn!r} ({e}): "
                              f"{_SPEC_HELP}") from None
    args = []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name not in hints:
            raise InvalidArgument(f"helper argument '{p.name}' has no annotation "
                                  f"or is not positional: {_SPEC_HELP}")
        args.append(_arg_spec(p.name, hints[p.name]))
    ret = hints.get("return", inspect.Signature.empty)
    if ret is None or ret is type(None):
        ret = "void"
    elif ret is int:
        ret = "u64"
    else:
        raise InvalidArgument(f"helper return is annotated {ret!r}: {_SPEC_HELP}")
    return f"{ret} ({', '.join(args)})"
