"""The presentation layer: figures, tables and widgets for the notebooks.

The only part of minilib that imports pandas, plotly or ipywidgets. Everything it
shows is computed by the core modules; widget callbacks are pure functions of the
widget values, so tests drive them by setting `.value` without a browser.
Import the submodules directly (e.g. `from minilib.lab.dashboard import ...`).
"""
