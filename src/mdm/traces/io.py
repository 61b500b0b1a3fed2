"""Reader registry (xarray-style backends) and the ``open_trace`` entry point.

A backend is a :class:`TraceBackend` with ``guess_can_open(path)`` and
``open(path, **kwargs) -> AppTrace``, and optionally ``open_lazy(path, **kwargs) ->
LazyApp`` (one kernel at a time; without it ``open_trace(..., lazy=True)`` wraps the
eager reader); :func:`open_trace` asks the registered backends in order and uses the
first that accepts the path. Other modules add their own with
:func:`register_backend`; installed packages can also declare a ``TraceBackend``
object in the entry-point group ``mdm.trace_backends`` (loaded on first use).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal, overload

from mdm.errors import TraceFormatError
from mdm.traces import accelsim, store
from mdm.traces.model import AppTrace, LazyApp


@dataclass(frozen=True)
class TraceBackend:
    """A named trace reader."""

    name: str
    guess_can_open: Callable[[Path], bool]
    open: Callable[..., AppTrace]
    open_lazy: Callable[..., LazyApp] | None = None

    def lazy(self, path: Path, **kwargs: Any) -> LazyApp:
        """``open_lazy``, or the eager ``open`` behind the same interface."""
        if self.open_lazy is not None:
            return self.open_lazy(path, **kwargs)
        app = self.open(path, **kwargs)
        return LazyApp(name=app.name, n_kernels=app.n_kernels, commands_factory=app.iter_commands)


BACKENDS: dict[str, TraceBackend] = {}
ENTRY_POINT_GROUP = "mdm.trace_backends"
_entry_points_loaded = False


def register_backend(backend: TraceBackend, *, first: bool = False) -> None:
    """Add (or replace) a backend; ``first`` makes it take precedence over the others."""
    if first:
        others = {k: v for k, v in BACKENDS.items() if k != backend.name}
        BACKENDS.clear()
        BACKENDS[backend.name] = backend
        BACKENDS.update(others)
    else:
        BACKENDS[backend.name] = backend


def _accelsim_dir(p: Path) -> bool:
    return (p.is_dir() and (p / "kernelslist.g").is_file()) or (
        p.is_file() and p.name == "kernelslist.g"
    )


def _accelsim_kernel(p: Path) -> bool:
    return p.is_file() and any(p.name.endswith(s) for s in accelsim.TRACE_SUFFIXES)


def _open_kernel(p: Path, **kw: Any) -> AppTrace:
    return AppTrace(commands=[accelsim.read_kernel(p, **kw)], name=p.name.split(".")[0])


def _open_store(p: Path, **kw: Any) -> AppTrace:
    return store.load_store(p)


def _lazy_store(p: Path, **kw: Any) -> LazyApp:
    return store.lazy_store(p)


register_backend(TraceBackend("accelsim", _accelsim_dir, accelsim.read_app, accelsim.lazy_app))
register_backend(TraceBackend("accelsim-kernel", _accelsim_kernel, _open_kernel))
register_backend(TraceBackend("store", store.is_store, _open_store, _lazy_store))


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        backend = ep.load()
        if not isinstance(backend, TraceBackend):
            raise TypeError(f"entry point {ep.name!r} of {ENTRY_POINT_GROUP} is not a TraceBackend")
        if backend.name not in BACKENDS:
            register_backend(backend)


@overload
def open_trace(
    path: str | Path, *, engine: str | None = None, lazy: Literal[False] = ..., **kwargs: Any
) -> AppTrace: ...
@overload
def open_trace(
    path: str | Path, *, engine: str | None = None, lazy: Literal[True], **kwargs: Any
) -> LazyApp: ...
@overload
def open_trace(
    path: str | Path, *, engine: str | None = None, lazy: bool, **kwargs: Any
) -> AppTrace | LazyApp: ...
def open_trace(
    path: str | Path, *, engine: str | None = None, lazy: bool = False, **kwargs: Any
) -> AppTrace | LazyApp:
    """Open any supported trace: Accel-Sim dir / ``kernelslist.g`` / ``.traceg[.xz|.gz]``
    or a compact store. ``engine`` forces a backend by name; ``kwargs`` (e.g.
    ``allow_unknown``) go to the Accel-Sim readers. ``lazy=True`` returns a
    :class:`~mdm.traces.model.LazyApp` that reads one kernel at a time (bounded memory
    for applications larger than memory), else the whole :class:`AppTrace`."""
    p = Path(path)
    _load_entry_points()
    if engine is not None:
        if engine not in BACKENDS:
            raise TraceFormatError(
                p, None, f"unknown trace engine {engine!r}; expected one of {sorted(BACKENDS)}"
            )
        b = BACKENDS[engine]
        return b.lazy(p, **kwargs) if lazy else b.open(p, **kwargs)
    if not p.exists():
        raise TraceFormatError(p, None, "no such file or directory")
    for b in BACKENDS.values():
        if b.guess_can_open(p):
            return b.lazy(p, **kwargs) if lazy else b.open(p, **kwargs)
    if p.is_dir() and (p / "meta.json").is_file():
        store._read_meta(p)  # a damaged store: say what is wrong with its meta.json
    raise TraceFormatError(
        p,
        None,
        "expected an Accel-Sim trace (directory with kernelslist.g, kernelslist.g, "
        ".traceg[.xz|.gz]) or an mdm trace store (.mdmtrace directory)",
    )
