"""traces stage of the mdm pipeline: Accel-Sim reader/writer, compact store, opcode table."""

from mdm.traces.accelsim import read_app, read_kernel, write_app, write_kernel
from mdm.traces.io import BACKENDS, TraceBackend, open_trace, register_backend
from mdm.traces.model import AppTrace, InstrClass, KernelTrace, Memcpy
from mdm.traces.store import load_store, save_store

__all__ = [
    "BACKENDS",
    "AppTrace",
    "InstrClass",
    "KernelTrace",
    "Memcpy",
    "TraceBackend",
    "load_store",
    "open_trace",
    "read_app",
    "read_kernel",
    "register_backend",
    "save_store",
    "write_app",
    "write_kernel",
]
