"""The presentation layer: figures, tables and widgets for the notebooks.

The only part of minilib that imports pandas, plotly or ipywidgets. Everything it
shows is computed by the core modules; widget callbacks are pure functions of the
widget values, so tests drive them by setting `.value` without a browser.
Import the submodules directly (e.g. `from minilib.lab.dashboard import ...`).
"""

import sys


def _jsonschema_without_the_iri_grammar() -> None:
    """Import jsonschema before plotly does, without its IRI format checks.

    plotly's widget imports nbformat, which imports jsonschema, whose format module
    imports `rfc3987_syntax` when it is installed (Jupyter installs it): that module
    builds a Lark grammar as it is imported, about 2.8 s on this project's machine, the
    largest part of the projector page's wait and of a chapter's first figure. Nothing
    in a lab's kernel checks an IRI against a schema, so jsonschema is imported with
    that one module hidden, and the module is not hidden afterwards (importing it
    yourself works as before). Skipped when either is imported already.
    """
    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return
    sys.modules["rfc3987_syntax"] = None  # an import of it raises ImportError
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        pass
    finally:
        del sys.modules["rfc3987_syntax"]


_jsonschema_without_the_iri_grammar()
