"""Kernel names: demangled, reduced to the function name, shortened for tables.

Accel-Sim's NVBit tracer records a kernel's name as the CUDA runtime gives it, mangled
(``_ZN2at6native29vectorized_elementwise_kernelILi4E...``) for C++ kernels; Nsight
Compute prints the bare function name, or the demangled signature. Names are
demangled with ``cxxfilt`` (the C++ runtime's ``__cxa_demangle``); a name that does
not demangle is kept as it is.
"""

from __future__ import annotations

import cxxfilt


def demangle(name: str) -> str:
    """``name`` demangled when it is an Itanium C++ mangled name (``_Z...``), else as it is."""
    s = name.strip()
    if s.startswith("_Z"):
        try:
            return cxxfilt.demangle(s)
        except (cxxfilt.InvalidName, UnicodeError):  # not a mangled name after all
            pass
    return s


def _cut_tail_group(s: str, open_: str, close: str) -> str:
    """``s`` without a trailing balanced ``open_ ... close`` group."""
    s = s.rstrip()
    if not s.endswith(close):
        return s
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        if s[i] == close:
            depth += 1
        elif s[i] == open_:
            depth -= 1
            if depth == 0:
                return s[:i].rstrip()
    return s


def _strip_signature(name: str) -> tuple[str, bool]:
    """The demangled ``name`` without qualifiers and parameter list, then without its
    template arguments; and whether it had any."""
    s = demangle(name)
    for suffix in (" const", " volatile"):
        s = s.removesuffix(suffix)
    s = _cut_tail_group(s, "(", ")")
    bare = _cut_tail_group(s, "<", ">")
    return bare, bare != s


def _unqualified(s: str) -> str:
    """``s`` without return type and namespaces/classes (outside brackets)."""
    depth, start = 0, 0
    for i, c in enumerate(s):
        if c in "<({[":
            depth += 1
        elif c in ">)}]":
            depth -= 1
        elif depth == 0 and c == " ":
            start = i + 1
        elif depth == 0 and c == ":" and s[i : i + 2] == "::":
            start = i + 2
    return s[start:].lstrip(":")


def function_name(name: str) -> str:
    """The bare function name of a kernel name: demangled if mangled (``_Z...``), then
    without return type, namespaces/classes, template arguments and parameter list.
    ``void at::native::f<4, T>(int, T)`` -> ``f``; ``jacobi(float*)`` -> ``jacobi``."""
    return _unqualified(_strip_signature(name)[0]) or name.strip()


def display_name(name: str, n: int = 32) -> str:
    """A kernel name for a table: :func:`function_name`, with ``<…>`` when the kernel
    is a template instance, at most ``n`` characters (cut with ``…``)."""
    bare, template = _strip_signature(name)  # demangled once
    base = (_unqualified(bare) or name.strip()) + ("<…>" if template else "")
    return base if len(base) <= n else base[: n - 1] + "…"
