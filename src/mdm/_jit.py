"""Numba decorators shared by the compiled hot loops (trace parser, profile, cache
simulator), and the on-disk cache they compile into.

Every module of the package takes ``njit`` from here, never from numba directly
(``tests/test_jit_cache.py`` checks), so that importing it first registers the stamped
cache locators (:data:`LOCATORS`): numba keeps a compiled function until *its own*
source file changes, but a compiled function holds copies of every jitted function it
calls (the cache simulator's issue loop in ``mdm.memory._core`` inlines the streaming L1's
table from ``mdm.memory.streaming``, which inlines ``_core``'s way-index helpers, and
every module inlines ``mdm.memory._index.u``). So an edit to one module left the others'
cached code calling its old version: found when a change of the way index's layout in
``_core`` hung the streaming L1's cached ``add`` in an endless hash probe. The stamp of
every mdm function's cache is a digest of all of the package's jitted sources, so an
edit to any of them recompiles them all (a cold compilation, about a minute) and never
runs a stale copy. ``NUMBA_CACHE_DIR`` is honoured as by numba.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from llvmlite import ir
from numba import njit, types
from numba.core import caching, cgutils
from numba.extending import intrinsic

_PACKAGE = Path(__file__).resolve().parent
_MARKERS = ("numba", "mdm._jit")  # a source that compiles, or calls compiled code


def sources_digest(root: Path) -> str:
    """Digest of the ``.py`` files under ``root`` that mention numba or this module
    (path and contents, in path order)."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        text = p.read_bytes()
        if any(m.encode() in text for m in _MARKERS):
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + text + b"\0")
    return h.hexdigest()


@functools.cache
def package_stamp() -> str:
    """The source stamp of every cached mdm function: :func:`sources_digest` of the
    package, computed once per process."""
    return "mdm-" + sources_digest(_PACKAGE)


def _stamped(base: type) -> type:
    """A numba cache locator like ``base`` for the package's functions only, whose
    source stamp is :func:`package_stamp` instead of the function's own file's."""

    class Locator(base):  # type: ignore[misc, valid-type]
        @classmethod
        def from_function(cls, py_func, py_file):  # type: ignore[no-untyped-def]
            if not Path(py_file).resolve().is_relative_to(_PACKAGE):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self) -> str:
            return package_stamp()

    Locator.__name__ = Locator.__qualname__ = "PackageStamped" + base.__name__.lstrip("_")
    return Locator


def _register() -> tuple[type, ...]:
    """Put the stamped locators first in numba's list, once per process (older numba
    versions name these classes with a leading underscore)."""
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    done = tuple(c for c in impl._locator_classes if c.__name__.startswith("PackageStamped"))
    if done:  # this module imported again (a reload)
        return done
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator")
    bases = [getattr(caching, n, None) or getattr(caching, "_" + n) for n in names]
    ours = tuple(_stamped(b) for b in bases)
    impl._locator_classes = [*ours, *impl._locator_classes]
    return ours


#: the stamped locators: under ``NUMBA_CACHE_DIR`` when set, else in ``__pycache__``
LOCATORS = _register()

#: Decorator of the hot loops' small helper functions (the trace parser's token scans,
#: the cache simulator's lookups, victims, queues, L2 access and streaming-L1 table):
#: each is compiled once on its own, without numba's reference counting (``_nrt=False``:
#: they allocate nothing) and with the ``numpy`` error model (no zero-divisor exception
#: path; the simulator's divisors are validated positive configuration values), and
#: LLVM inlines it at every call site (``forceinline``). Numba's IR-level
#: ``inline="always"``, used before, copied every helper's IR into each call site and
#: typed it again there. Cold compilations, fresh ``NUMBA_CACHE_DIR``, interleaved
#: rounds: the mdm_pascal issue loop 41-53 s -> 30-35 s, the Accel-Sim parser's
#: ``parse_chunk`` 10.5-11.2 s -> 4.0-4.2 s; run times unchanged
#: (docs/measurement-log.md).
inlined = njit(cache=True, _nrt=False, error_model="numpy", forceinline=True)


@intrinsic
def prefetch(typingctx, array, index):  # type: ignore[no-untyped-def]
    """Ask the CPU to fetch ``array[index]``'s cache line ahead of its use (LLVM's
    ``llvm.prefetch``: a read, into every cache level; x86 ``prefetcht0``). It never
    faults, and reads nothing into the program: an index past the end is harmless.
    For compiled loops whose next reads are scattered over arrays far larger than
    the CPU's caches, at addresses known a few iterations ahead."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        # read (0), high temporal locality (3: all levels), data cache (1)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen
