"""Where the cache simulator's issue loop spends its time: ``perf`` samples per instruction.

numba's compiled code is invisible to ``perf`` (no symbols, no line table). This script
compiles the issue loop afresh into a private numba cache (so that the object code is
kept: a loop loaded from the cache has none; the first run takes a few minutes), writes
it out, runs the simulation under ``perf record`` (software clock, Linux's
``linux-perf``), maps every sample that falls in the compiled code to its function and
instruction, and prints the hottest instructions with the disassembly around them
(``objdump``). A sample lands on the instruction *after* a slow one (skid), e.g. after
the load that missed the CPU's caches.

Figures only, no assertions; the hot spots are for reading against the source of
:mod:`mdm.memory._core`. Usage::

    python benchmarks/profile_cachesim.py [--gpu mdm_pascal] [--workload stride]
        [--ctas 16384] [--repeat 2] [--top 25] [--context 12] [--out DIR]

(``--ctas`` applies to the built-in workloads that take a block count; the others run
at their default size. ``--workload`` may also name a trace folder, e.g. a reference
trace with ``--gpu ../shared/reference/configs/mdm_pascal/gpgpusim.config``.)

The child run simulates the trace ``--repeat`` times (a first simulation, then
repeated ones, as ``bench_cachesim.py``); ``DIR`` keeps ``loop.o``, ``perf.data``, the
annotated disassembly ``loop.ann`` (samples per instruction) and ``functions.txt``.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

_CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from mdm.config.load import load_gpu
    from mdm.memory import _core, cachesim
    from mdm.traces import open_trace
    from mdm.traces.workloads import WorkloadError, generate

    gpu_name, workload, ctas, repeat, out = sys.argv[1:6]

    def make(n):  # workloads without a block count keep their default size
        if Path(workload).exists():  # a trace folder or kernelslist.g
            return open_trace(workload)
        try:
            return generate(workload, ctas=n)
        except WorkloadError:
            return generate(workload)

    g = load_gpu(gpu_name)
    small = make(64)
    for _ in range(3):
        cachesim.simulate_app(small, g)
    entry = _core._RUN_TIMED[cachesim.issue_loop_key(g)]
    (cres,) = entry.overloads.values()
    lib = cres.library
    out = Path(out)
    try:  # compiled in this process: the object code is there
        (out / "loop.o").write_bytes(lib._get_compiled_object())
    except RuntimeError:
        pass  # loaded from the private cache: loop.o was written by the first run
    name = cres.fndesc.mangled_name
    (out / "base").write_text(hex(lib.get_pointer_to_function(name)) + " " + name)
    if int(repeat) == 0:
        sys.exit(0)
    app = make(int(ctas))
    for i in range(int(repeat)):
        t0 = time.perf_counter()
        cachesim.simulate_app(app, g)
        print(f"simulation {i + 1}: {time.perf_counter() - t0:.3f} s", flush=True)
    """
)


def _symbols(obj: Path) -> list[tuple[int, int, str]]:
    """(offset, size, name) of the text symbols of ``obj``, by offset."""
    out = subprocess.run(["nm", "-S", "--defined-only", str(obj)], capture_output=True, text=True)
    syms = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTW":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    return sorted(syms)


def _short(name: str) -> str:
    """``mdm.memory._core._timed_loop_impl.<locals>.impl`` from numba's mangled name
    (``_ZN`` then length-prefixed parts, ``_3c`` / ``_3e`` escaping ``<`` / ``>``)."""
    i = name.find("_ZN")
    if i < 0:
        return name[:60]
    i += 3
    words = []
    while i < len(name) and name[i].isdigit():
        j = i
        while j < len(name) and name[j].isdigit():
            j += 1
        n = int(name[i:j])
        words.append(name[j : j + n].replace("_3c", "<").replace("_3e", ">"))
        i = j + n
    return ".".join(words) or name[:60]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="mdm_pascal")
    ap.add_argument("--workload", default="stride")
    ap.add_argument("--ctas", type=int, default=16384)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--context", type=int, default=12, help="instructions shown before a hot one")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    for tool in ("perf", "nm", "objdump"):
        if shutil.which(tool) is None:
            sys.exit(f"error: {tool} not found (perf: Debian's linux-perf; nm, objdump: binutils)")
    out = a.out or Path(tempfile.mkdtemp(prefix="mdm-profile-"))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(out / "numba-cache"))
    child = [sys.executable, "-c", _CHILD, a.gpu, a.workload, str(a.ctas)]
    # loop.o and the private cache belong to one version of the simulator's sources and to
    # one GPU's compiled entry: otherwise the recorded child would recompile (numba checks
    # the sources' times) and its samples would land in the compiler, not in loop.o
    stamp = out / "sources"
    memory = Path(__file__).resolve().parents[1] / "src" / "mdm" / "memory"
    key = (
        a.gpu
        + "\n"
        + "\n".join(f"{f.name} {f.stat().st_mtime_ns}" for f in sorted(memory.glob("*.py")))
    )
    if not (out / "loop.o").exists() or not stamp.exists() or stamp.read_text() != key:
        shutil.rmtree(out / "numba-cache", ignore_errors=True)
        (out / "loop.o").unlink(missing_ok=True)
        print("compiling the issue loop into a private numba cache (a few minutes) ...")
        subprocess.run([*child, "0", str(out)], env=env, check=True)
        stamp.write_text(key)
    data = out / "perf.data"
    subprocess.run(
        ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-o", str(data)]
        + [*child, str(a.repeat), str(out)],
        env=env,
        check=True,
    )
    base = int((out / "base").read_text().split()[0], 16)
    syms = _symbols(out / "loop.o")
    entry = next(o for o, _, n in syms if n == (out / "base").read_text().split()[1])
    script = subprocess.run(
        ["perf", "script", "-i", str(data), "-F", "ip"], capture_output=True, text=True
    ).stdout
    per_fn: collections.Counter[str] = collections.Counter()
    per_ip: collections.Counter[int] = collections.Counter()
    total = 0
    for line in script.split():
        try:
            off = int(line, 16) - base + entry
        except ValueError:
            continue
        total += 1
        for o, size, name in syms:
            if o <= off < o + size:
                per_fn[name] += 1
                per_ip[off] += 1
                break
    jit = sum(per_fn.values())
    if jit == 0:
        sys.exit(f"error: none of the {total} samples fell in the compiled code (a larger --ctas?)")
    print(f"\n{total} samples, {jit} ({100 * jit / max(total, 1):.1f} %) in the compiled code")
    with open(out / "functions.txt", "w") as f:
        for name, n in per_fn.most_common():
            f.write(f"{n:8d} {_short(name)}\n")
    for name, n in per_fn.most_common(8):
        print(f"{n:8d} {100 * n / max(jit, 1):5.1f} %  {_short(name)}")
    lo = min(o for o, _, n in syms if n in per_fn)
    hi = max(o + s for o, s, n in syms if n in per_fn)
    asm = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", f"--start-address={lo}", f"--stop-address={hi}"]
        + [str(out / "loop.o")],
        capture_output=True,
        text=True,
    ).stdout
    rows = []
    for line in asm.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s*(.*)", line)
        if m:
            text = re.sub(r"<_ZN[^>]*\+(0x[0-9a-f]+)>", r"<+\1>", m.group(2))
            rows.append((int(m.group(1), 16), text))
    (out / "loop.ann").write_text(
        "\n".join(f"{per_ip.get(o, 0):7d} {o:8x}: {t}" for o, t in rows) + "\n"
    )
    index = {o: i for i, (o, _) in enumerate(rows)}
    print(f"\nhottest instructions (samples, % of the compiled code); annotated: {out}/loop.ann")
    shown: set[int] = set()
    for off, n in per_ip.most_common(a.top):
        i = index.get(off)
        if i is None or i in shown:
            continue
        print(f"\n--- {n} samples ({100 * n / max(jit, 1):.1f} %) at {off:x}")
        for j in range(max(0, i - a.context), min(len(rows), i + 3)):
            shown.add(j)
            o, t = rows[j]
            mark = ">" if j == i else " "
            print(f"{mark}{per_ip.get(o, 0):6d} {o:8x}: {t[:100]}")


if __name__ == "__main__":
    main()
