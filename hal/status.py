"""IREE status codes and the one exception type of the HAL.

Codes and their numbers are IREE's (`iree/base/status.h`). As in `iree.runtime`,
an INVALID_ARGUMENT or NOT_FOUND error is also a `ValueError`, an OUT_OF_RANGE error an
`IndexError` and an UNIMPLEMENTED error a `NotImplementedError`, so code written
against `iree.runtime` catches ours.
"""

from __future__ import annotations

import enum


class StatusCode(enum.IntEnum):
    """IREE's status codes (iree_status_code_t), with IREE's numbers."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16
    DEFERRED = 17


class HalError(RuntimeError):
    """A failed HAL operation: `code` says what kind, `message` says what was wrong.

    `HalError(code, message)` builds the subclass that matches the code, so
    `HalError(StatusCode.INVALID_ARGUMENT, ...)` is also a `ValueError`.
    """

    def __new__(cls, code: StatusCode | int, message: str = "", context: str = ""):
        if cls is HalError:
            cls = _SUBCLASS_BY_CODE.get(StatusCode(code), HalError)
        return super().__new__(cls)

    def __init__(self, code: StatusCode | int, message: str = "", context: str = ""):
        """`context`: what failed around the status, printed before it as iree.runtime
        prints "synchronous semaphore failure: UNKNOWN; ..."."""
        self.code = StatusCode(code)
        self.message = message
        self.context = context
        text = f"{self.code.name}; {message}" if message else self.code.name
        super().__init__(f"{context}: {text}" if context else text)

    def copy(self) -> "HalError":
        """The same code and message without a traceback: raise copies of stored failures."""
        return HalError(self.code, self.message, self.context)

    def __reduce__(self):
        return (HalError, (int(self.code), self.message, self.context))


class InvalidArgumentError(HalError, ValueError):
    """A HalError with INVALID_ARGUMENT; also a ValueError, as in iree.runtime."""


class NotFoundError(HalError, ValueError):
    """A HalError with NOT_FOUND; also a ValueError, as in iree.runtime."""


class OutOfRangeError(HalError, IndexError):
    """A HalError with OUT_OF_RANGE; also an IndexError, as in iree.runtime."""


class UnimplementedError(HalError, NotImplementedError):
    """A HalError with UNIMPLEMENTED; also a NotImplementedError, as in iree.runtime."""


# iree.runtime's classes by code (runtime/bindings/python/status_utils.cc,
# ApiStatusToPyExcClass); every other code is a RuntimeError there and here.
_SUBCLASS_BY_CODE = {
    StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    StatusCode.NOT_FOUND: NotFoundError,
    StatusCode.OUT_OF_RANGE: OutOfRangeError,
    StatusCode.UNIMPLEMENTED: UnimplementedError,
}


def as_error(failure: "HalError | StatusCode | int | str | BaseException") -> HalError:
    """Turns what a caller may pass as a failure into a fresh HalError (a string is UNKNOWN).

    Stored failures never carry a traceback: its frames would keep alive everything
    the failing code referred to (buffers, submissions) for as long as the failure."""
    if isinstance(failure, HalError):
        return failure.copy()
    if isinstance(failure, str):
        return HalError(StatusCode.UNKNOWN, failure)
    if isinstance(failure, (StatusCode, int)) and not isinstance(failure, bool):
        if failure not in StatusCode._value2member_map_:
            codes = ", ".join(f"{c.name} ({c.value})" for c in StatusCode)
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{failure} is not a status code: {codes}")
        return HalError(StatusCode(failure), f"failed with {StatusCode(failure).name}")
    if isinstance(failure, BaseException):
        return HalError(StatusCode.INTERNAL, f"{type(failure).__name__}: {failure}")
    raise TypeError(f"cannot make a HAL failure of {failure!r}")
