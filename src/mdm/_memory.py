"""How much memory this process may still take (guards against an OOM kill)."""

from __future__ import annotations


def available_memory_bytes() -> int | None:
    """Memory this process can still take: ``MemAvailable`` of ``/proc/meminfo``, or
    less under a cgroup (v2) limit; None where neither can be read (not Linux)."""
    found: list[int] = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read().strip())
        if limit != "max":
            found.append(max(int(limit) - used, 0))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def gb(n: float) -> str:
    """``n`` bytes in GB for messages: three significant digits, whole GB from 100 on."""
    g = n / 1e9
    return f"{g:,.0f}" if g >= 100 else f"{g:.3g}"


def too_large(subject: str, held: int, projected: float, basis: str) -> str | None:
    """The message when ``subject``, ``projected`` bytes by ``basis`` with ``held`` of
    them in memory already, would not fit twice (reading or building it and predicting
    it hold about twice its arrays) in what this process has; None when it fits or the
    available memory is unknown."""
    free = available_memory_bytes()
    if free is None or 2 * projected <= held + free:
        return None
    return (
        f"{subject} would hold about {gb(projected)} GB in memory ({basis}) and needs about "
        f"twice that once predicted; {gb(held + free)} GB are available"
    )
