"""traces stage of the mdm pipeline: Accel-Sim reader/writer, compact store, opcode table."""

from mdm.traces.accelsim import lazy_app, read_app, read_kernel, write_app, write_kernel
from mdm.traces.io import BACKENDS, TraceBackend, open_trace, register_backend
from mdm.traces.model import AnyApp, AppTrace, InstrClass, KernelTrace, LazyApp, Memcpy
from mdm.traces.store import lazy_store, load_store, save_store

__all__ = [
    "BACKENDS",
    "AnyApp",
    "AppTrace",
    "InstrClass",
    "KernelTrace",
    "LazyApp",
    "Memcpy",
    "TraceBackend",
    "lazy_app",
    "lazy_store",
    "load_store",
    "open_trace",
    "read_app",
    "read_kernel",
    "register_backend",
    "save_store",
    "write_app",
    "write_kernel",
]
