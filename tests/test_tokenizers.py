"""minilib.measure.tokenizers: real token counts, offline, beside the estimate.

Known counts, the same structure costs as the estimate, and a clear error without the
package.
"""

import subprocess
import sys

import pytest

from minilib import ContextWindow, estimate_tokens, load_session, run_session
from minilib.measure.tokenizers import (
    ENCODINGS,
    INSTALL_HINT,
    MESSAGE_OVERHEAD,
    TOOL_CALL_OVERHEAD,
    TokenizerUnavailable,
    available,
    message_counter,
    text_counter,
)

needs_bpe = pytest.mark.skipif(
    not available(), reason="bpe-openai is not installed (pip install -e '.[tokenizers]')"
)


@needs_bpe
@pytest.mark.parametrize("name", ENCODINGS)
def test_known_counts(name):
    count = text_counter(name)
    assert count("hello world") == 2  # one token per word in both vocabularies
    assert count("") == 0
    assert (
        count("<|endoftext|>") > 1
    )  # special-token text is counted as text, not refused


@needs_bpe
def test_the_two_vocabularies_differ_on_chinese():
    text = "上下文窗口告急时 harness 的六条压缩路径"
    assert text_counter("o200k_base")(text) < text_counter("cl100k_base")(text)


@needs_bpe
def test_message_counter_keeps_the_estimates_structure_costs():
    count = text_counter("o200k_base")
    messages = [
        {"role": "user", "content": "hello world"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                }
            ],
        },
    ]
    expected = (
        2 * MESSAGE_OVERHEAD
        + count("hello world")
        + TOOL_CALL_OVERHEAD
        + count("read_file")
        + count('{"path": "a"}')
    )
    assert message_counter("o200k_base")(messages) == expected


@needs_bpe
def test_the_window_governs_with_a_real_counter():
    counter = message_counter("o200k_base")
    session = load_session()
    run = run_session(session, count_tokens=counter)
    assert run.overflow is None
    assert all(
        r.tokens_after <= 1200 for r in run.rounds
    )  # measured with the same real counter
    assert [r.tokens_after for r in run.rounds] != [
        r.tokens_after for r in run_session(session).rounds
    ]
    assert ContextWindow(1200, [], counter).count_tokens is counter


@needs_bpe
def test_tokenizers_work_with_the_network_switched_off():
    script = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network is off in this test')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse; "
        "socket.getaddrinfo = refuse\n"
        "from minilib.measure.tokenizers import text_counter\n"
        "print(text_counter('o200k_base')('hello world'), "
        "text_counter('cl100k_base')('hello world'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "2"]


def test_missing_package_gives_the_install_command(monkeypatch):
    import minilib.measure.tokenizers as tokenizers

    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # makes `import bpe_openai` fail
    tokenizers._encoding.cache_clear()
    try:
        assert not tokenizers.available()
        with pytest.raises(TokenizerUnavailable, match="bpe-openai") as error:
            text_counter("o200k_base")
        assert INSTALL_HINT in str(error.value)
    finally:
        tokenizers._encoding.cache_clear()


def test_unknown_encoding_is_named():
    with pytest.raises(
        TokenizerUnavailable,
        match="unknown encoding 'p50k_base'; expected one of o200k_base",
    ):
        text_counter("p50k_base")


def test_the_estimate_is_unchanged_by_this_module():
    assert (
        estimate_tokens([{"role": "user", "content": "hello world"}])
        == MESSAGE_OVERHEAD + 3
    )


@needs_bpe
def test_tokenizer_table_shows_the_estimate_undercounting_logs_and_erring_on_chinese():
    from minilib.reports import tokenizer_rows

    rows = tokenizer_rows()
    log = next(r for r in rows if "build.log" in r["text"])
    chinese = next(r for r in rows if r["text"].startswith("Chinese"))
    assert (
        log["estimate"] < log["o200k_base"] * 0.8
    )  # digits and punctuation: far more than 1 token per 4 chars
    assert (
        chinese["estimate"] > chinese["o200k_base"]
    )  # o200k merges common Chinese characters
