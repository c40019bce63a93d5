"""One display rule for every interactive view of the lab."""

import ipywidgets as widgets


class ShownAsWidget:
    """Displays as its `widget`, with a short, stable text/plain.

    A widget tree's own repr embeds every value and the figure's random uids;
    the one-line text is what a notebook viewer without a kernel shows, and
    what nbval compares.
    """

    widget: widgets.Widget

    def text_form(self) -> str:
        # what a page shows before the notebook is run: say how to get the widget
        return f"{type(self).__name__} (run the notebook to use it)"

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.text_form()
        return bundle
