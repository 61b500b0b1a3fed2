"""The on-disk cache of the compiled functions is stamped with all of the package's
jitted sources (:mod:`mdm._jit`): an edit to any of them recompiles every cached
function, so none runs a stale copy of a function it inlined from another module."""

from __future__ import annotations

import re
from pathlib import Path

import mdm
from mdm import _jit
from mdm.memory import _core, streaming

PACKAGE = Path(mdm.__file__).parent


def test_every_module_takes_njit_from_mdm_jit() -> None:
    """Importing numba's decorators directly would skip the stamped locators when that
    module is the first to compile."""
    direct = re.compile(r"from numba import [^\n]*\b(njit|jit)\b|numba\.(njit|jit)\(")
    offenders = [
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name != "_jit.py" and direct.search(p.read_text())
    ]
    assert offenders == []


def test_package_functions_use_the_stamped_locator() -> None:
    for fn in (_core.fifo_slot, streaming.add, _core._victim_heap):
        locator = fn._cache._impl._locator
        assert isinstance(locator, _jit.LOCATORS)
        assert locator.get_source_stamp() == _jit.package_stamp()


def test_functions_outside_the_package_keep_numba_locators(tmp_path: Path) -> None:
    src = tmp_path / "user_module.py"
    src.write_text("def f():\n    return 1\n")
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    assert all(cls.from_function(ns["f"], str(src)) is None for cls in _jit.LOCATORS)


def test_digest_covers_the_jitted_sources_only(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    a = tmp_path / "sub" / "a.py"
    b = tmp_path / "b.py"
    a.write_text("from numba import types\nX = 1\n")
    b.write_text("Y = 2\n")
    d0 = _jit.sources_digest(tmp_path)
    b.write_text("Y = 3\n")  # no numba, no mdm._jit: not part of the stamp
    assert _jit.sources_digest(tmp_path) == d0
    a.write_text("from numba import types\nX = 2\n")  # a jitted source edited
    d1 = _jit.sources_digest(tmp_path)
    assert d1 != d0
    b.write_text("from mdm._jit import njit\nY = 3\n")  # calls compiled code
    assert _jit.sources_digest(tmp_path) not in (d0, d1)


def test_stamp_is_the_digest_of_the_installed_package() -> None:
    assert _jit.package_stamp() == "mdm-" + _jit.sources_digest(PACKAGE)
    assert len(_jit.LOCATORS) == 2


def test_registered_once_per_process() -> None:
    import importlib

    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    before = list(impl._locator_classes)
    again = importlib.reload(_jit)
    assert list(impl._locator_classes) == before
    assert again.LOCATORS == tuple(before[:2])
