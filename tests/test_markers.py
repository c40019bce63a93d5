"""minilib.markers: the marks compression writes, the cut it makes, and how both are
recognised again."""

import pytest

from minilib.markers import (
    AGING_MARK,
    INDEX_MARK,
    OMISSION_LINE,
    STORE_MARK,
    SUMMARY_MARK,
    cut_content,
    is_aged,
    is_marker_line,
    is_offloaded,
    is_store_index,
    is_summary,
    size_header,
)

TEXT = "abcdefghij"  # ten characters


def omission(count, call_id="c1"):
    return OMISSION_LINE.format(omitted=count, tool_call_id=call_id)


@pytest.mark.parametrize(
    "head, tail, kept_head, kept_tail",
    [
        (3, 2, "abc", "ij"),  # the middle five are cut
        (8, 5, "abcdefgh", "ij"),  # the tail starts after the head: nothing twice
        (3, 0, "abc", ""),  # no tail at all (text[-0:] would be the whole text)
        (20, 20, TEXT, ""),  # a head longer than the text keeps it whole
    ],
)
def test_the_cut_keeps_head_and_tail_and_counts_what_it_left_out(
    head, tail, kept_head, kept_tail
):
    cut = cut_content(TEXT, "HEADER", head, tail, OMISSION_LINE, "c1")
    omitted = len(TEXT) - len(kept_head) - len(kept_tail)
    assert cut == "\n".join(["HEADER", kept_head, omission(omitted), kept_tail])


def test_the_size_header_keeps_size_lines_and_error_code():
    assert size_header(AGING_MARK, "a\nb\nc") == f"{AGING_MARK} 原 5 字符 / 3 行"
    assert size_header(AGING_MARK, "a\nb\nc", "E2BIG").endswith(" / 错误码 E2BIG")


@pytest.mark.parametrize(
    "mark, test, role",
    [
        (AGING_MARK, is_aged, "tool"),
        (STORE_MARK, is_offloaded, "tool"),
        # what a summary or a store index writes is a message of its own, a user turn
        (SUMMARY_MARK, is_summary, "user"),
        (INDEX_MARK, is_store_index, "user"),
    ],
)
def test_each_mark_is_recognised_only_at_the_start(mark, test, role):
    assert test({"role": role, "content": f"{mark} rest"})
    assert not test({"role": role, "content": f"x {mark}"})
    assert not test({"role": role, "content": None})
    if role == "user":  # an assistant quoting the mark wrote no summary
        assert not test({"role": "assistant", "content": f"{mark} rest"})


def test_an_omission_line_is_a_marker_line_and_text_is_not():
    assert is_marker_line(omission(5))
    assert not is_marker_line("abc")
