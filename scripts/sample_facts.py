"""Draw the sample of the fact rule's findings that a person labels by hand.

    python scripts/sample_facts.py            # writes data/fact_rule_sample.json

Every fact `minilib.measure.fact_rule` finds in the bundled logs (data/logs/*: each
message's text and each call's arguments) is grouped with the others of its kind that
differ only in their digits (`col_00` ... `col_89` are one group, so a numbered series
counts once); the first of each group stands for it, and SIZE of them are drawn with a
fixed seed. Labels already in the file are kept for the items drawn again, so the
sample can be redrawn after the rule changes and only the new items need a person.
`tests/test_fact_rule.py` reads the file and computes the rule's precision from it.
"""

import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.logs.replay import TranscriptFileError, load_transcript
from minilib.measure.fact_rule import find_facts
from minilib.measure.used_facts import arguments_text

SAMPLE = ROOT / "data" / "fact_rule_sample.json"
SIZE, SEED, CONTEXT = 200, 26, 45
ABOUT = (
    "A sample of the facts minilib.measure.fact_rule finds in the bundled logs "
    "(data/logs), labelled by hand; drawn by scripts/sample_facts.py. Each item names "
    "where it was found (log, message index, field: 'content' or 'arguments N', the "
    "match's start) and shows the text around it. 'fact' is true when the string is a "
    "name, place, value or result of the task's own world (its code, files, settings, "
    "test results) that an agent could need to write back verbatim; false when it is "
    "the harness's or a tool protocol's own vocabulary (a tool call's JSON field "
    "names, tool names, XML tags, the harness's clock and usage lines), a language's "
    "or library's boilerplate that every program has (__name__, logging.getLogger), "
    "or a fragment that is not a whole fact (a sed expression read as a path, a glob "
    "cut short). 'why' says why a false one is not a fact."
)


def texts(message):
    """(field, text) of a message as the measure reads it: its content, then each
    call's argument values."""
    yield "content", message.get("content") or ""
    for number, call in enumerate(message.get("tool_calls") or ()):
        yield f"arguments {number}", arguments_text(call)


def findings():
    """The first finding of each group (same kind, same text but for digits)."""
    groups = {}
    for path in sorted((ROOT / "data" / "logs").iterdir()):
        try:
            log = load_transcript(path)
        except TranscriptFileError:  # the bundled damaged and unknown logs
            continue
        # the messages, then each compaction's replacement (what the model saw too)
        seen = log.messages + [m for c in log.compactions for m in c.replacement]
        for index, message in enumerate(seen):
            for field, text in texts(message):
                for found in find_facts(text):
                    key = (re.sub(r"\d+", "#", found.fact), found.kind)
                    context = text[max(0, found.start - CONTEXT) : found.start + CONTEXT]
                    groups.setdefault(
                        key,
                        {
                            "log": path.name,
                            "message": index,
                            "field": field,
                            "start": found.start,
                            "found": found.fact,
                            "kind": found.kind,
                            "context": context,
                        },
                    )
    return list(groups.values())


def where(item):
    return (item["log"], item["message"], item["field"], item["start"], item["found"])


def main():
    items = findings()
    random.Random(SEED).shuffle(items)
    old = {}
    if SAMPLE.exists():
        old = {where(i): i for i in json.loads(SAMPLE.read_text("utf-8"))["items"]}
    sample = []
    for item in items[:SIZE]:
        labelled = old.get(where(item), {})
        item["fact"] = labelled.get("fact")
        item["why"] = labelled.get("why", "")
        sample.append(item)
    lines = [json.dumps(item, ensure_ascii=False) for item in sample]
    text = '{"about": ' + json.dumps(ABOUT) + ',\n "items": [\n'
    text += ",\n".join(lines) + "\n]}\n"
    SAMPLE.write_text(text, encoding="utf-8")
    unlabelled = sum(item["fact"] is None for item in sample)
    print(f"wrote {len(sample)} items to {SAMPLE}; {unlabelled} need a label")


if __name__ == "__main__":
    main()
