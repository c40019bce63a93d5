"""minilib.model: the scripted model replays its recorded replies, whatever it is sent."""

from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import PROFILE

from minilib.markers import AGING_MARK
from minilib.model import ScriptedModel, first_line_of_result


def test_the_model_replays_the_script_whatever_it_is_sent(session):
    model = ScriptedModel(session.replies)
    assert not hasattr(model, "grounding")  # the core's model knows nothing of facts
    replies = [
        model.complete([{"role": "user", "content": "?"}]) for _ in session.replies
    ]
    assert replies == session.replies


BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028"]


@settings(PROFILE, max_examples=400)
@given(
    st.lists(
        st.sampled_from(list("ab \t") + BREAKS + ["\u2029", AGING_MARK]), max_size=12
    )
)
def test_the_first_line_of_a_result_is_that_of_its_lines(parts):
    """Read only as far as the line it quotes: the line `splitlines` gives."""
    content = "".join(parts)
    lines = content.splitlines()
    expected = lines[0] if lines else ""
    if expected.startswith(AGING_MARK) and len(lines) > 1 and lines[1].strip():
        expected = lines[1]  # an aged result: its kept head's first line
    assert first_line_of_result(content) == expected
