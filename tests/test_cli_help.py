"""Every command's ``--help``: rendered, with the docstrings' reST markup turned into text."""

from __future__ import annotations

from typing import Any

import typer
from typer.testing import CliRunner

from mdm.cli.main import app


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path of the CLI, groups included (a group has ``commands``; typer
    may bring its own copy of click, so no ``isinstance``)."""
    out = [prefix]
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            out += _commands(cmd, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


def test_every_help_renders_its_markup() -> None:
    """Help texts are rendered as Markdown (``rich_markup_mode``): a docstring's
    double-backquoted ``--kernels`` reads as ``--kernels``, its paragraphs are
    re-wrapped, and no ``<placeholder>`` is swallowed as markup."""
    root = typer.main.get_command(app)
    paths = _commands(root)
    assert ("predict",) in paths and ("trace", "info") in paths and ("study", "dvfs") in paths
    runner = CliRunner()
    for path in paths:
        res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
        assert res.exit_code == 0, (path, res.output)
        assert "Usage" in res.output, path
        assert "``" not in res.output, (path, res.output)
    predict = runner.invoke(app, ["predict", "--help"], env={"COLUMNS": "100"}).output
    assert "at most --kernels kernels" in predict  # reST markup gone, words kept
    sweep = runner.invoke(app, ["sweep", "--help"], env={"COLUMNS": "100"}).output
    assert "sweep-NAME" in sweep

    # every --gpu (and GPU argument) names all that load_gpu reads, Accel-Sim logs too
    def command(path: tuple[str, ...]) -> Any:
        cmd = root
        for name in path:
            cmd = cmd.commands[name]
        return cmd

    gpu_params = {"gpu", "a", "b"}  # config diff compares two: A and B
    with_gpu = [p for p in paths if gpu_params & {q.name for q in command(p).params}]
    assert len(with_gpu) >= 5 and ("config", "diff") in with_gpu
    for path in with_gpu:
        out = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).output
        assert "gpgpusim.config or Accel-Sim log" in out, path


def test_version_is_the_installed_one() -> None:
    """``mdm --version`` prints the package's version, which is the installed
    distribution's (pyproject.toml), and runs no sub-command."""
    from importlib.metadata import version

    import mdm

    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0
    assert r.output.strip() == f"mdm {mdm.__version__}"
    assert mdm.__version__ == version("mdm")
