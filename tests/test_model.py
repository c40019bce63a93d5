"""minilib.model: the scripted model replays its recorded replies, whatever it is sent."""

from minilib.model import ScriptedModel


def test_the_model_replays_the_script_whatever_it_is_sent(session):
    model = ScriptedModel(session.replies)
    assert not hasattr(model, "grounding")  # the core's model knows nothing of facts
    replies = [
        model.complete([{"role": "user", "content": "?"}]) for _ in session.replies
    ]
    assert replies == session.replies
