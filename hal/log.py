"""Logging: every library module logs under the one `tt_hal` logger, so a user sets
one level for all of it (`logging.getLogger("tt_hal")`), and TT_HAL_LOG=debug|info|
warning|error sends it to stderr without any code. The library never prints."""

from __future__ import annotations

import logging
import os

ROOT = "tt_hal"
ENVIRONMENT = "TT_HAL_LOG"
_handler: logging.Handler | None = None
_configured = False


def get_logger(module: str) -> logging.Logger:
    """The logger of a module (`get_logger(__name__)` -> tt_hal.hal.queue; a module of
    the tt_hal namespace keeps its name). The first call applies $TT_HAL_LOG."""
    global _configured
    if not _configured:
        _configured = True
        configure()
    return logging.getLogger(module if module.split(".")[0] == ROOT else f"{ROOT}.{module}")


def configure(level: str | int | None = None) -> None:
    """Logs the library to stderr at `level` (default: $TT_HAL_LOG; unset: leave
    logging to the application). Calling it again changes the level."""
    global _handler
    level = os.environ.get(ENVIRONMENT) if level is None else level
    if level in (None, ""):
        return
    root = logging.getLogger(ROOT)
    number = level if isinstance(level, int) else logging.getLevelName(str(level).upper())
    if not isinstance(number, int):
        root.warning("%s=%r is not a logging level (debug, info, warning, error); ignored", ENVIRONMENT, level)
        return
    if _handler is None:
        _handler = logging.StreamHandler()
        _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(_handler)
        root.propagate = False  # a root handler some library installed would print every line twice
    root.setLevel(number)
