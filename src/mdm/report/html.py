"""One self-contained HTML page per sweep / validation / demo (plain string template)."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;}}
table{{border-collapse:collapse;font-size:12px}}td,th{{border:1px solid #ccc;padding:2px 6px}}
img{{max-width:100%}}</style></head>
<body><h1>{title}</h1>
{body}
</body></html>
"""


@dataclass
class Section:
    """A heading with optional text, figures (paths) and tables."""

    heading: str
    text: str = ""
    figures: Sequence[Path] = field(default_factory=list)
    tables: Sequence[pd.DataFrame] = field(default_factory=list)


def write_page(path: str | Path, title: str, sections: Sequence[Section]) -> Path:
    """Write the page; figure links are relative to the page (SVG shown, PNG linked)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = []
    for s in sections:
        parts.append(f"<h2>{html.escape(s.heading)}</h2>")
        if s.text:
            parts.append(f"<p>{html.escape(s.text)}</p>")
        for fig in s.figures:
            if Path(fig).suffix != ".svg":
                continue
            rel = os.path.relpath(fig, path.parent)
            png = os.path.relpath(Path(fig).with_suffix(".png"), path.parent)
            parts.append(f'<p><a href="{html.escape(png)}"><img src="{html.escape(rel)}"></a></p>')
        for t in s.tables:
            parts.append(t.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep=""))
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(_PAGE.format(title=html.escape(title), body="\n".join(parts)))
    os.replace(tmp, path)
    return path
