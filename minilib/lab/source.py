"""The library's own code in a chapter: rendered from its source, so it cannot drift.

`show_source(ToolResultAging.age_message)` displays the function as it is in the
installed library, highlighted, with the file it lives in. A chapter that teaches a
function shows it this way, next to the article's snippet, and walks through it.
"""

import html
import inspect
import textwrap
from pathlib import Path

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from .style import CODE_HIGHLIGHT_STYLE


class SourceView:
    """One function or class of minilib, as its source file has it."""

    def __init__(self, obj):
        self.obj = obj
        self.name = getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj)))
        module = inspect.getmodule(obj)
        package_root = Path(inspect.getfile(module)).resolve()
        parts = module.__name__.split(".")
        self.file = "/".join(parts) + (
            ".py" if package_root.name != "__init__.py" else "/__init__.py"
        )
        self.source = textwrap.dedent(inspect.getsource(obj)).rstrip("\n")

    @property
    def title(self) -> str:
        return f"{self.file} · {self.name}"

    def _repr_html_(self) -> str:
        formatter = HtmlFormatter(noclasses=True, nowrap=True, style=CODE_HIGHLIGHT_STYLE)
        code = highlight(self.source, PythonLexer(), formatter)
        return (
            '<div class="ccl-source" style="max-width:100%;overflow-x:auto">'
            f'<div style="font-size:13px;color:#555;margin-bottom:2px">'
            f"{html.escape(self.title)}</div>"
            '<pre style="font-size:13px;line-height:1.4;margin:0;padding:8px 10px;'
            'background:#f6f8fa;border:1px solid #ddd;border-radius:4px;white-space:pre">'
            f"{code}</pre></div>"
        )

    def __repr__(self) -> str:
        return f"# {self.title}\n{self.source}"


def show_source(obj) -> SourceView:
    """The source of `obj` (a minilib function, method or class), to show in a chapter."""
    return SourceView(obj)
