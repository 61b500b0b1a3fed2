"""Error types. Every user-facing error names the file, the line and what was expected."""

from __future__ import annotations

from pathlib import Path


class MdmError(Exception):
    """Base class of errors the CLI reports as a one-line message (no traceback)."""


class TraceFormatError(MdmError):
    """A malformed, truncated or inconsistent trace file."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class ConfigError(MdmError):
    """An invalid configuration file or value."""

    def __init__(self, path: str | Path | None, message: str) -> None:
        self.path = None if path is None else str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}" if self.path else message)


class EmptyInputError(MdmError, ValueError):
    """An input with nothing to model, e.g. an application whose kernels have no
    instructions (a ``ValueError`` too, for callers of the Python API)."""


class MdmWarning(UserWarning):
    """A non-fatal problem worth telling the user (e.g. configuration options not mapped)."""
