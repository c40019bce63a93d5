"""The planted facts are real, the probe sorts them right, and the comparison's findings
hold."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from minilib import load_session, run_session
from minilib.measure import Fact, load_facts, probe
from minilib.measure.facts import KINDS, FactsFileError, check_facts
from minilib.measure.tokenizers import available
from minilib.policies import PATHS, ExternalStore, run_path
from minilib.policies.registry import (
    default_facts,
    load_recall_session,
    run_baseline_probe,
)
from minilib.reports import kind_rows, six_paths_page
from minilib.reports.__main__ import main as write_page
from minilib.session import SessionFileError

ROOT = Path(__file__).resolve().parent.parent


def tool_outputs(session):
    outputs = {}
    for reply in session.replies:
        for call in reply.get("tool_calls") or ():
            outputs[call["id"]] = session.tools.call(
                call["function"]["name"], call["function"]["arguments"]
            ).content
    return outputs


def test_every_declared_fact_is_in_its_first_tool_output_and_in_no_earlier_one(session):
    facts = load_facts(ROOT / "data" / "facts.json")
    outputs = tool_outputs(session)
    check_facts(facts, outputs, list(outputs))  # raises on any false declaration
    order = list(outputs)
    for fact in facts:
        assert fact.text in outputs[fact.first_call]
        assert not any(
            fact.text in outputs[c] for c in order[: order.index(fact.first_call)]
        )
    assert (
        {"path", "error_code", "number", "command"}
        <= {f.kind for f in facts}
        <= set(KINDS)
    )


def test_a_false_declaration_is_named(session):
    outputs = tool_outputs(session)
    with pytest.raises(
        FactsFileError, match="fact x: 'E2BIG' first appears in call_01, not in call_03"
    ):
        check_facts([Fact("x", "error_code", "E2BIG", "call_03")], outputs, list(outputs))
    with pytest.raises(
        FactsFileError, match="fact y: 'no such text' is not in the output of call_02"
    ):
        check_facts(
            [Fact("y", "number", "no such text", "call_02")], outputs, list(outputs)
        )
    with pytest.raises(
        FactsFileError, match="fact z: first_call 'call_99' is not a tool call"
    ):
        check_facts([Fact("z", "number", "E2BIG", "call_99")], outputs, list(outputs))


@pytest.mark.parametrize(
    "content, message",
    [
        ("[]", "expected an object with a non-empty list 'facts'"),
        (
            '{"facts": [{"id": "a", "kind": "color", "text": "t", "first_call": "c"}]}',
            r"facts\[0\].kind is 'color'",
        ),
        (
            '{"facts": [{"id": "a", "kind": "path", "text": "", "first_call": "c"}]}',
            r"facts\[0\].text is missing",
        ),
        (
            '{"facts": [{"id": "a", "kind": "path", "text": "t", "first_call": "c"},'
            ' {"id": "a", "kind": "path", "text": "u", "first_call": "c"}]}',
            r"facts\[1\].id 'a' is used by an earlier",
        ),
        ("{", "not valid JSON"),
    ],
)
def test_a_bad_facts_file_is_named_with_file_and_field(tmp_path, content, message):
    path = tmp_path / "facts.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FactsFileError, match=message):
        load_facts(path)
    with pytest.raises(FactsFileError, match="no such facts file"):
        load_facts(tmp_path / "missing.json")


def test_probe_sorts_facts_into_kept_recallable_traceable_lost():
    facts = [
        Fact(n, "number", text, "c1")
        for n, text in (("k", "K42"), ("r", "R42"), ("t", "T42"), ("l", "L42"))
    ]
    outputs = {"c1": "K42 R42 T42 L42", "c2": "T42"}
    store = ExternalStore()
    store.put("c1", "R42 L42")
    window = [
        {"role": "user", "content": "K42; recall id=c1"},
        {"role": "tool", "tool_call_id": "c2", "content": "."},
    ]
    assert probe(facts, window, outputs, store) == {
        "k": "kept",
        "r": "recallable",
        "t": "traceable",
        "l": "recallable",
    }
    assert probe(facts, window[1:], outputs) == {
        "k": "lost",
        "r": "lost",
        "t": "traceable",
        "l": "lost",
    }
    assert (
        probe(facts, window, {"c2": "T42"}) == {}
    )  # c1 has not answered yet: nothing surfaced


# --- the comparison
# -----------------------------------------------------------------------------


def test_the_article_path_reproduces_the_article_run_round_by_round(session):
    compared = run_path("rolling_summary")
    article = run_session(session)
    assert [r.tokens for r in compared.rounds] == [r.tokens_after for r in article.rounds]
    assert (
        compared.final_tokens == 1193
        and compared.extra_model_calls == article.summary_calls == 1
    )


def test_without_compression_every_fact_is_kept_and_every_fact_surfaces():
    baseline = run_baseline_probe()
    assert set(baseline.final_states.values()) == {"kept"} and len(
        baseline.final_states
    ) == len(default_facts())
    assert baseline.final_tokens == 17991


def test_aging_alone_overflows_where_the_article_needs_its_summary():
    run = run_path("aging")
    assert (
        not run.completed and len(run.rounds) == 9
    )  # rounds 0-8 sent; round 9 is the article's summary round


def test_hierarchical_keeps_more_facts_than_rolling_and_pays_in_model_calls():
    rolling, hierarchical = run_path("rolling_summary"), run_path("hierarchical")
    assert hierarchical.final_count("kept") > rolling.final_count("kept")
    assert hierarchical.extra_model_calls > rolling.extra_model_calls


def test_truncation_costs_no_calls_and_loses_more_than_the_summary():
    truncation, rolling = run_path("truncation"), run_path("rolling_summary")
    assert truncation.extra_model_calls == 0 and truncation.completed
    assert truncation.final_count("lost") > rolling.final_count("lost")


def test_the_store_loses_nothing_and_recall_brings_the_cut_fact_back():
    plain = run_path("store")
    assert plain.final_count("lost") == 0 and plain.final_count("traceable") == 0
    assert plain.final_states["status-58-in-review"] == "recallable"
    recalled = run_path("store", session=load_recall_session())
    assert (
        recalled.recall_calls == 1
        and recalled.final_states["status-58-in-review"] == "kept"
    )
    assert all(
        run_path(key).final_states["status-58-in-review"] != "kept" for key in PATHS
    )


def test_the_prompt_sections_file_builds_the_prompt_path_6_cuts(session):
    from minilib.policies.registry import prompt_sections

    sections = prompt_sections(session)  # data/prompt_sections.json, written by hand
    assert sections[0].text == session.system
    assert [(s.name, s.required, s.priority) for s in sections[1:]] == [
        ("tool:read_file", True, 0),
        ("tool:list_dir", True, 0),
        ("tool:search_text", True, 0),
        ("output_format", False, 2),
        ("tool:recall", False, 1),
        ("example", False, 0),
    ]
    assert all(s.text.strip() for s in sections)


def test_budgeting_is_what_lets_the_full_prompt_finish():
    from minilib.policies.registry import full_prompt_tokens

    assert run_path("budgeting").completed
    assert not run_path("budgeting", full_prompt_tokens()).completed


def test_recall_session_is_the_session_plus_one_recall(session):
    recall = load_recall_session()
    assert recall.replies[:13] == session.replies[:13]
    call = recall.replies[13]["tool_calls"][0]
    assert (
        call["function"]["name"] == "recall"
        and json.loads(call["function"]["arguments"])["id"] == "call_01"
    )
    with pytest.raises(SessionFileError, match="unknown tool 'recall'"):
        load_session(
            ROOT / "data" / "session_recall.json"
        )  # the plain harness has no store


def test_run_path_rejects_unknown_paths_and_bad_parameters():
    with pytest.raises(
        ValueError, match="unknown path 'zip'; expected one of truncation"
    ):
        run_path("zip")
    with pytest.raises(ValueError, match="key_lines must be >= 0"):
        run_path("hierarchical", -1)


@pytest.mark.skipif(not available(), reason="the tokenizer table needs bpe-openai")
def test_docs_table_is_what_the_comparison_computes():
    assert (ROOT / "docs" / "six_paths.md").read_text(
        encoding="utf-8"
    ) == six_paths_page.build_markdown()


def test_compare_command_writes_the_markdown(tmp_path):
    out = tmp_path / "six.md"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minilib.reports",
            "six-paths",
            "--no-tokenizers",
            "--write",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == six_paths_page.build_markdown(
        include_tokenizers=False
    )


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("task"), "field 'task' is missing"),
        (
            lambda d: d["replies"][13]["tool_calls"][0]["function"].update(name="shell"),
            r"replies\[13\].tool_calls\[0\] calls unknown tool 'shell'",
        ),
        (lambda d: d.update(workspace="nowhere"), "names nowhere, which is not a folder"),
        (
            lambda d: d["replies"].insert(0, {"role": "user", "content": "hi"}),
            r"replies\[0\] must be an assistant message",
        ),
    ],
)
def test_a_bad_recall_session_is_named(tmp_path, change, message):
    document = json.loads(
        (ROOT / "data" / "session_recall.json").read_text(encoding="utf-8")
    )
    document["workspace"] = str(
        ROOT / "data" / "workspace"
    )  # absolute, so the copy may live in tmp_path
    change(document)
    path = tmp_path / "session_recall.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(SessionFileError, match=message):
        load_recall_session(path)


def test_compare_command_without_the_tokenizer_package_says_how_to_get_it(
    monkeypatch, capsys
):
    from minilib.measure import tokenizers

    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # makes `import bpe_openai` fail
    tokenizers._encoding.cache_clear()
    try:
        assert write_page(["six-paths"]) == 2
    finally:
        tokenizers._encoding.cache_clear()
    error = capsys.readouterr().err
    assert (
        "needs bpe-openai" in error
        and tokenizers.INSTALL_HINT in error
        and "--no-tokenizers" in error
    )


def test_kind_rows_count_kept_facts_per_kind():
    rows = {
        row["kind"]: row
        for row in kind_rows(
            {"none": run_baseline_probe(), "rolling": run_path("rolling_summary")}
        )
    }
    facts = default_facts()
    assert rows["path"]["none"] == f"{sum(f.kind == 'path' for f in facts)}/5" == "5/5"
    rolling = run_path("rolling_summary").final_states
    kept_numbers = sum(rolling[f.id] == "kept" for f in facts if f.kind == "number")
    assert rows["number"]["rolling"] == f"{kept_numbers}/8"
