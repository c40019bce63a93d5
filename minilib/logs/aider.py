"""Aider's two text histories: the Markdown chat history and the LLM history.

- aider-chat-md (`.aider.chat.history.md`): each run starts `# aider chat started
  at <time>`; a user turn is lines beginning `#### ` (a blank turn is `<blank>`,
  each line ends in a Markdown break `  `); the assistant's reply is the plain text
  after it, SEARCH/REPLACE edits included (no tool calls, no ids); lines beginning
  `> ` are aider's own output, written for the person. The model never sees those
  lines as such: aider sends file contents, the repo map and its system prompt with
  every call (not in this file), and adds output to the chat only in a few places,
  read here as user messages marked `observation`:
  `/run`, `/test` or `!` output the person added to the chat (in aider's
  "I ran this command" wording; newer versions print the output to the terminal
  only, so it is skipped as not recorded), errors answered yes to "Attempt to fix
  lint/test errors?", and the output right before a reply that no user turn
  prompted (a reflected message: a SEARCH/REPLACE block that failed to match, files
  added on request). Status lines (tokens, applied edits, commits, questions) are
  dropped from those; any other `> ` block is skipped. Commands (`/add`, `/drop`,
  `/undo`...) are aider's, not the model's, and are skipped; `/ask`, `/code`,
  `/architect` and `/context` send their text. Each run is a new conversation
  (aider restores an old one only with --restore-chat-history), so the last run
  that has a turn is read, from its last `/clear` or `/reset` on; the rest is
  skipped.
- aider-llm-history (`.aider.llm.history`): per call a `TO LLM <time>` block, its
  messages separated by `-------` lines, each line prefixed `SYSTEM `, `USER ` or
  `ASSISTANT `, then `LLM RESPONSE <time>` with the reply (lines prefixed
  `ASSISTANT `). It is the exact window of every call, so every main-model call is
  a round: a window that goes on from the one before and its reply adds its new
  messages; any other (the first, whose "Ok" to the files is aider's, not the
  model's; one where aider re-sent edited files or summarized its chat) is the
  harness's rebuild of the window (`AgentCompaction.rebuilt`), followed as the
  model saw it. Every main call is also kept in `LoadedLog.sent_windows`, so
  `minilib.measure.sent` sets the replay beside what aider sent. A user message in
  aider's words for output it added
  (command output, lint errors, a failed edit, files added) is marked
  `observation`. Weak-model calls (a commit message, a chat summary: a system
  prompt asking for one, no assistant turn) are skipped.
"""

import re
from typing import List, NamedTuple, Optional, Tuple

from .base import Builder
from .detect import Doc, Shape

RUN_START = "# aider chat started at "
SENDS_TEXT = ("/ask", "/code", "/architect", "/context")
CLEARS = ("/clear", "/reset")
RUNS_COMMAND = ("/run", "/test")
QUESTION = re.compile(r"\(Y\)es/\(N\)o.*\]:\s*(\S*)\s*$")
ADD_OUTPUT = re.compile(
    r"^Add (the output|[\d.]+k tokens of command output) to the chat\?"
)
ADDED_LINES = re.compile(r"^Added \d+ lines? of output to the chat\.$")
FIX_ERRORS = re.compile(r"^Attempt to fix (lint|test) errors\?")
ADD_FILES = re.compile(r"^Add (these files|file) to the chat\?")
# aider's status lines: for the person, never part of what it sends back
STATUS = re.compile(
    r"^(Tokens: |Cost: |Applied edit to |Commit [0-9a-f]{6,} |Did not apply edit|"
    r"Added \d+ lines? of output|Aider v|Main model:|Weak model:|Model:|Git repo:|"
    r"Repo-map:|Use /help|Cur working dir|Added .* to the chat|Dropped |Removed |"
    r"Warning: |Only \d+ reflections allowed|The LLM did not conform|https://aider\.chat/)"
)
RUN_OUTPUT = "I ran this command:\n\n{command}\n\nAnd got this output:\n\n{output}\n"
# how aider words what it adds to the chat for the model: environment output
REFLECTED = re.compile(
    r"^(I ran this command:|# Fix any errors below|# \d+ SEARCH/REPLACE blocks? failed|"
    r"I added these files to the chat:)"
)
ADDED_FILES = (
    "I added these files to the chat: {fnames}\nLet me know if there are others we "
    "should add."
)


# --- the Markdown chat history ------------------------------------------------------


def _quoted(line: str) -> Optional[str]:
    """The text of one of aider's `> ` lines, or None for any other line."""
    if line.startswith("> "):
        return line[2:].rstrip()
    if line.rstrip() == ">":
        return ""
    return None


def _blocks(lines: List[Tuple[int, str]]):
    """(kind, first line number, lines) for user, app and assistant blocks of a run.

    A `> ` line inside a fenced block of a reply is the reply's (code, not aider)."""
    blocks: list = []
    fenced = closed = False
    for number, line in lines:
        quoted = None if fenced else _quoted(line)
        if line.startswith("#### ") or line.rstrip() == "####":
            kind, text = "user", line[5:].rstrip()
        elif quoted is not None:
            kind, text = "app", quoted
        elif not line.strip():
            if blocks and blocks[-1][0] == "assistant":
                blocks[-1][2].append("")
            else:  # a blank line ends a turn: aider starts each one on a new paragraph
                closed = True
            continue
        else:
            kind, text = "assistant", line.rstrip()
            if line.lstrip().startswith("```"):
                fenced = not fenced
        if kind != "assistant":
            fenced = False
        if blocks and blocks[-1][0] == kind and not (closed and kind != "assistant"):
            blocks[-1][2].append(text)
        else:
            blocks.append((kind, number, [text]))
        closed = False
    return blocks


def _runs(doc: Doc):
    """(first line number, header, numbered lines) of each run, in file order."""
    runs: list = []
    for number, line in enumerate(doc.text.splitlines(), 1):
        if line.startswith(RUN_START):
            runs.append((number, line[2:].strip(), []))
        elif runs:
            runs[-1][2].append((number, line))
    return runs


def _detect_md(doc: Doc):
    if any(line.startswith(RUN_START) for line in doc.text.splitlines()):
        return None
    return "no '# aider chat started at' line"


def _answer(line: str) -> Optional[bool]:
    """Yes or no to one of aider's questions, or None when the line asks none."""
    match = QUESTION.search(line)
    if not match:
        return None
    return (match.group(1) or "y").lower()[:1] in ("y", "a")


def _command(text: str) -> Tuple[str, str]:
    """(command, its argument) of a user turn; ("", text) for a plain message."""
    if text.startswith("!"):
        return "/run", text[1:].strip()
    if text.startswith("/"):
        name, _, rest = text.partition(" ")
        return name.lower(), rest.strip()
    return "", text


def _read_app_block(
    lines: List[str], at: str, pending: Optional[str], reflected: bool, log: Builder
) -> None:
    """One block of aider's `> ` output: an observation where it reached the chat."""
    if pending is not None:  # the output of /run, /test or !
        asked = next((i for i, line in enumerate(lines) if ADD_OUTPUT.match(line)), None)
        added = any(ADDED_LINES.match(line) for line in lines) or (
            asked is not None and _answer(lines[asked]) is True
        )
        output = lines[:asked] if asked is not None else []
        output = [line for line in output if not ADDED_LINES.match(line)]
        if not added:
            log.skip(at, "command output not added to the chat")
        elif not any(line.strip() for line in output):
            log.skip(
                at,
                "command output added to the chat, but not written to the history file",
            )
        else:
            text = "\n".join(output).strip("\n")
            log.user(RUN_OUTPUT.format(command=pending, output=text), observation=True)
            log.note(at, "command output added to the chat: in aider's run_output words")
        return
    fix = next((i for i, line in enumerate(lines) if FIX_ERRORS.match(line)), None)
    if fix is not None and _answer(lines[fix]):
        kept = [line for line in lines[:fix] if not STATUS.match(line)]
        log.user("\n".join(kept).strip("\n"), observation=True)
        return
    if not reflected:
        log.skip(at, "aider's own output: shown to the person, not sent to the model")
        return
    asked = next((i for i, line in enumerate(lines) if ADD_FILES.match(line)), None)
    if asked is not None and _answer(lines[asked]):
        names = [line.strip() for line in lines[:asked] if line.strip()]
        names = [name for name in names if not STATUS.match(name)]
        log.user(ADDED_FILES.format(fnames=", ".join(names)), observation=True)
        log.note(at, "files added at the model's mention: in aider's added_files words")
        return
    kept = [line for line in lines if not STATUS.match(line) and _answer(line) is None]
    if any(line.strip() for line in kept):
        log.user("\n".join(kept).strip("\n"), observation=True)
    else:
        log.skip(at, "aider's own output: shown to the person, not sent to the model")


def _read_md(doc: Doc, log: Builder) -> None:
    runs = _runs(doc)
    chosen = len(runs) - 1
    while chosen > 0 and not any(
        kind != "app" for kind, _, _ in _blocks(runs[chosen][2])
    ):
        chosen -= 1
    for number, header, _ in runs[:chosen] + runs[chosen + 1 :]:
        log.skip(
            f"line {number}",
            "another run: a separate conversation (read: the last run with a turn)",
        )
    blocks = _blocks(runs[chosen][2])
    start = 0
    for index, (kind, number, lines) in enumerate(blocks):
        if kind == "user" and _command(_user_text(lines))[0] in CLEARS:
            start = index + 1
    for kind, number, _ in blocks[:start]:
        log.skip(f"line {number}", "before /clear or /reset: the model no longer saw it")
    pending: Optional[str] = None
    replied = True  # a reply before any user turn would be reflected
    for index in range(start, len(blocks)):
        kind, number, lines = blocks[index]
        at = f"line {number}"
        if kind == "user":
            replied = False
            command, argument = _command(_user_text(lines))
            pending = None
            if not command:
                log.user(argument)
            elif command in SENDS_TEXT and argument:
                log.user(argument)
                log.note(at, f"{command}: its text is sent to the model")
            elif command in RUNS_COMMAND:
                pending = argument
            else:
                log.skip(at, "aider command: handled by aider, not sent to the model")
        elif kind == "app":
            following = blocks[index + 1][0] if index + 1 < len(blocks) else None
            reflected = following == "assistant" and replied
            _read_app_block(lines, at, pending, reflected, log)
            pending = None
        else:
            text = "\n".join(lines).strip()
            if text:
                log.assistant(text)
                replied = True
    log.note(
        f"line {runs[chosen][0]}",
        "system prompt, repo map and file contents: sent with every call, "
        "not in the chat history",
    )


def _user_text(lines: List[str]) -> str:
    text = "\n".join(line.rstrip() for line in lines)
    return "" if text == "<blank>" else text


# --- the LLM history ----------------------------------------------------------------


class SentWindow(NamedTuple):
    """One main-model call as aider really sent it."""

    call: int  # the call's number among the file's TO LLM blocks, from 1
    messages: List[dict]  # the window, in chat-completions shape
    reply: Optional[str]  # the response, None when none was recorded
    line: int  # the line of its TO LLM header


TO_LLM = re.compile(r"^TO LLM (\S+)\s*$")
RESPONSE = re.compile(r"^LLM RESPONSE (\S+)\s*$")
ROLES = ("SYSTEM", "USER", "ASSISTANT")
SEPARATOR = "-------"


def _detect_llm(doc: Doc):
    first = next((line for line in doc.text.splitlines() if line.strip()), "")
    if TO_LLM.match(first):
        return None
    return "no first line 'TO LLM <time>'"


def _prefixed(line: str, number: int, log: Builder) -> Tuple[str, str]:
    role, _, text = line.partition(" ")
    if role not in ROLES:
        raise log.fail(
            f"line {number}: a line of a TO LLM block must start with SYSTEM, USER or "
            f"ASSISTANT (or be a '{SEPARATOR}' separator)"
        )
    return role.lower(), text


def _calls(doc: Doc, log: Builder):
    """(header line, window messages, reply or None) of every TO LLM block."""
    calls: list = []
    section = None
    for number, line in enumerate(doc.text.splitlines(), 1):
        if TO_LLM.match(line):
            calls.append([number, [], None])
            section = "window"
        elif RESPONSE.match(line):
            if section != "window":
                raise log.fail(f"line {number}: LLM RESPONSE without a TO LLM block")
            calls[-1][2] = []
            section = "response"
        elif section is None:
            if line.strip():
                raise log.fail(f"line {number}: text before the first TO LLM block")
        elif section == "response":
            if line.startswith("ASSISTANT ") or line == "ASSISTANT":
                line = line[10:]
            calls[-1][2].append(line)
        elif line.strip() == SEPARATOR:
            calls[-1][1].append(None)  # the next line starts a message
        elif not line.strip() and not calls[-1][1]:
            continue
        else:
            role, text = _prefixed(line, number, log)
            window = calls[-1][1]
            if not window or window[-1] is None or window[-1]["role"] != role:
                if window and window[-1] is None:
                    window.pop()
                window.append({"role": role, "content": text})
            else:
                window[-1]["content"] += "\n" + text
    for call in calls:
        if call[1] and call[1][-1] is None:
            call[1].pop()
        if not call[1]:
            raise log.fail(f"line {call[0]}: a TO LLM block with no messages")
        if call[2] is not None:
            call[2] = "\n".join(call[2]).strip("\n")
    return calls


def weak_call(window: List[dict]) -> Optional[str]:
    """What a weak-model call was for ('a commit message', 'a chat summary'), or None."""
    if any(m["role"] == "assistant" for m in window) or window[0]["role"] != "system":
        return None
    system = window[0]["content"].lower()
    if "commit message" in system:
        return "a commit message"
    if "summarize this partial conversation" in system:
        return "a chat summary"
    return None


def _tail_start(window: List[dict]) -> int:
    """Where a call's new turn begins in its window: after the last assistant message
    (the reply before, or aider's own "Ok" to the files it sent), else after the
    leading system messages."""
    last = max(
        (n for n, message in enumerate(window) if message["role"] == "assistant"),
        default=None,
    )
    if last is not None:
        return last + 1
    return next((n for n, m in enumerate(window) if m["role"] != "system"), len(window))


def _tell(message: dict, at: str, log: Builder) -> None:
    if message["role"] == "system":
        log.system(message["content"], at)
    elif message["role"] == "user":
        log.user(message["content"], bool(REFLECTED.match(message["content"])))
    else:
        log.assistant(message["content"])


def _replay_calls(main: List["SentWindow"], log: Builder) -> None:
    """Every main call as a round: its window, then its reply. A window that goes on
    from the one before and its reply adds only its new messages; any other window
    (the first, with aider's own "Ok" to the files it sends; one whose files,
    repo map or summarized history aider rebuilt) is the harness's rebuild: the
    messages before its new turn replace what the model saw, as a compaction's do."""
    seen: List[dict] = []  # the last window and its reply: what the model saw
    for sent in main:
        at = f"TO LLM at line {sent.line}"
        window = sent.messages
        if seen and window[: len(seen)] == seen:
            new = window[len(seen) :]
        else:
            start = _tail_start(window)
            system = 0
            while system < start and window[system]["role"] == "system":
                system += 1
            if not seen:  # the first call: its system prompt opens the log
                for message in window[:system]:
                    _tell(message, at, log)
            kept = system if window[:system] == log.messages[:system] else 0
            replacement = log.replacement()
            for message in window[kept:start]:
                _tell(message, at, replacement)
            log.compaction(
                f"line {sent.line}",
                "its TO LLM block",
                replacement,
                kept=kept,
                rebuilt=True,
            )
            new = window[start:]
        for message in new:
            _tell(message, at, log)
        if sent.reply is None:
            log.note(f"line {sent.line}", "a call with no recorded response")
            seen = []  # the next window cannot go on from an unknown reply
            continue
        log.assistant(sent.reply)
        seen = window + [{"role": "assistant", "content": sent.reply}]


def _read_llm(doc: Doc, log: Builder) -> None:
    main: List[SentWindow] = []
    for call, (line, window, reply) in enumerate(_calls(doc, log), 1):
        purpose = weak_call(window)
        if purpose:
            log.skip(
                f"line {line}",
                f"weak-model call ({purpose}): not part of the conversation",
            )
            continue
        main.append(SentWindow(call, window, reply, line))
    if not main:
        raise log.fail("aider-llm-history: no main-model call, only weak-model ones")
    _replay_calls(main, log)
    log.sent_windows = main


SHAPES = [
    Shape("aider-llm-history", _detect_llm, _read_llm, reads_text=True),
    Shape("aider-chat-md", _detect_md, _read_md, reads_text=True),
]
