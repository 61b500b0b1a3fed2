"""The documentation's ``mdm`` command lines name commands and options that exist.

Every line of the code blocks of the README, ``docs/status.md`` and the hardware
README that starts with ``mdm``, and every inline
``mdm ...`` span, is resolved against the CLI (sub-commands, with ``a|b|c``
alternatives each checked), and every ``--option`` on it (comments included) must be
one that command accepts; the README's Python block runs. Keeps the set-up, the
command list and the API example true when commands, options or functions change.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from mdm.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    ROOT / "README.md",
    ROOT / "docs" / "status.md",
    ROOT / "benchmarks" / "hardware" / "README.md",
]


def _commands(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    lines = []
    in_block = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            s = line.strip()
            for part in s.split("&&"):  # the set-up line: venv && install && mdm demo
                part = part.strip()
                if part.startswith("mdm "):
                    lines.append(part)
    lines += [m for m in re.findall(r"`(mdm [^`]+)`", text) if "--" in m]
    return lines


def _group(cmd: Any) -> dict[str, Any] | None:
    """A command group's sub-commands (Typer's groups are not always ``click.Group``)."""
    return getattr(cmd, "commands", None)


def _resolve(root: Any, words: list[str]) -> list[Any]:
    """The commands a line names (one per ``a|b`` alternative of its sub-command)."""
    cmds = [root]
    for w in words:
        sub = _group(cmds[0])
        names = w.split("|")
        if sub is None or not all(n in sub for n in names):
            break
        cmds = [sub[n] for n in names]
    return cmds


def _options(cmd: Any) -> set[str]:
    return {o for p in cmd.params for o in [*p.opts, *p.secondary_opts] if o.startswith("--")}


COMMANDS = sorted({c for doc in DOCS for c in _commands(doc)})


def test_readme_has_command_lines() -> None:
    readme = _commands(DOCS[0])
    assert len(readme) >= 20
    assert any(c.startswith("mdm demo") for c in readme)


@pytest.mark.parametrize("line", COMMANDS)
def test_readme_command_exists_with_its_options(line: str) -> None:
    root = typer.main.get_command(app)
    words = line.split()[1:]
    cmds = _resolve(root, words)
    assert all(_group(c) is None for c in cmds), f"no sub-command in {line!r}"
    used = {m for m in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line)}
    for cmd in cmds:
        missing = used - _options(cmd) - {"--help"}
        assert not missing, f"{line!r}: {cmd.name} has no option {sorted(missing)}"


def test_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's Python block runs as written from the repository root (it reads
    ``../shared``) and predicts something."""
    if not (ROOT.parent / "shared" / "reference" / "traces").is_dir():
        pytest.skip("../shared/reference not found")
    text = DOCS[0].read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "no Python block in the README"
    monkeypatch.chdir(ROOT)
    for code in blocks:
        scope: dict[str, Any] = {}
        exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own README
        assert scope["pred"].to_rows()[-1]["cycles"] > 0
