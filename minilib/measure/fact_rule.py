"""What counts as a fact in an agent's log: one rule, owned by the measure alone.

The measures ask "did the agent still have the facts it used?" (`used_facts`, the
cost report, the compactions report). Their answer means something only if the rule
that says what a fact is belongs to no policy being judged: a summary that lists
exactly the strings the judge looks for would score well by construction. So this
module imports nothing but the standard library, and no policy may import it
(`tests/test_fact_rule.py` checks both).

A **fact** is a string a tool can show and an agent can write back verbatim, of one
of these kinds:

- **url**: `https://host/path`;
- **path**: a path with a slash (`src/app.py`, `/etc/hosts`, `~/x`, `./run.sh`), or a
  file name with a known extension (`app.py`, `Cargo.toml`);
- **file:line**: a path or file name followed by `:line` or `:line:column`
  (`src/app.py:42`); its path is a fact too;
- **identifier**: snake_case (`handle_event`, `__init__`), camelCase
  (`loadSessionData`), PascalCase with an inner capital (`TranscriptRun`,
  `KeyError`), CONSTANT_CASE (`NOT_FOUND`) and dotted names (`os.path.join`);
- **number**: a number of three or more digits (`404`, `1,342,177`, `2026-11-02`,
  `0.25`, `1.2.3`), a version (`v2.1`), an issue number (`#58`), a fraction of three
  digits or more (`3/10`, not `1/4`), or any number with a unit after it (`30s`,
  `12 MB`, `7 passed`, `line 42`); a line number a tool wrote in its margin
  (`   930→`, `cat -n`'s `   930<tab>`) is not;
- **hash**: a hexadecimal run of 7 to 64 characters with a digit and a letter (a
  commit, a digest; kept as its first 7 characters, as `git log --oneline` writes
  it), or a UUID whole;
- **error code**: an errno or signal name (`ENOENT`, `E2BIG`, `SIGKILL`), a code of
  letters and three or more digits (`E501`, `TS2345`), a dashed code (`CVE-2024-3094`,
  `PROJ-123`), `[Errno 7]`, `exit code 2`;
- **setting**: `key=value` where the key has an underscore, a dot or a leading `--`
  (`tool_timeout_s=30`, `max_parallel_calls = 4`, `--max-mb=5`), or is a word of
  three letters or more written tight against the `=` (`REPEAT=3`); the key is a fact
  too when it is an identifier.

**The stop list** (`STOP`): strings a pattern matches that are not facts a task
rests on: abbreviations written with dots (`e.g`, `i.e`), product and project
names with an inner capital (`GitHub`, `JavaScript`, `OpenAI`), names of encodings
and algorithms (`SHA256`, `X509`, `UTF-8`), and English pairs written with a slash
(`and/or`, `read/write`). An all-capitals word with no digit and no underscore
(`SELECT`, `UUID`, `ANSI`, `TODO`, `README`, `TIMEOUT`) is never a fact unless it is
an errno or signal name: such words are keywords, acronyms and shouting far more
often than codes.

**Limits**, said plainly: a fact is text, so one written in other words (a count
spelt out, a path shortened) is a different fact or none; bare one- and two-digit
numbers are not facts (a `3` says nothing without its unit), so `at least 60` is
missed; the rule reads ASCII word characters, so a CJK name is not an identifier.
Its precision on a hand-labelled sample of the bundled logs and its recall on the
planted facts are measured in `tests/test_fact_rule.py` and stated in
`docs/fact-rule.md`.

Example:

    >>> facts("KeyError in src/app.py:42 after 1,342 bytes; set timeout_s=30 (E2BIG)")
    ... # doctest: +NORMALIZE_WHITESPACE
    [('KeyError', 'identifier'), ('src/app.py:42', 'file:line'),
     ('src/app.py', 'path'), ('1,342 bytes', 'number'), ('timeout_s=30', 'setting'),
     ('timeout_s', 'identifier'), ('E2BIG', 'error code')]
    >>> facts("SELECT id FROM users WHERE name = 'x' LIMIT 10")  # keywords, no facts
    []
"""

import errno
import re
import signal
from typing import List, NamedTuple, Tuple

KINDS = (
    "url",
    "path",
    "file:line",
    "identifier",
    "number",
    "hash",
    "error code",
    "setting",
)
SHORT_HASH = 7  # a commit is named by its first 7 characters, as git log --oneline

# Codes an all-capitals word may be: errno names (ENOENT, E2BIG) and signal names.
CODE_WORDS = frozenset(errno.errorcode.values()) | frozenset(
    name for name in dir(signal) if name.startswith("SIG") and not name.startswith("SIG_")
)

STOP = frozenset(
    # abbreviations written with dots
    "e.g i.e a.m p.m"
    # product, company and project names with an inner capital
    " GitHub GitLab BitBucket JavaScript TypeScript CoffeeScript PowerShell PyPI OpenAI"
    " ChatGPT YouTube LinkedIn PostgreSQL MySQL MongoDB MariaDB JupyterLab JupyterHub"
    " IPython iPython NumPy SciPy PyTorch TensorFlow FastAPI LangChain LangGraph"
    " OpenHands DeepSeek WordPress DevOps MacBook iPhone iPad iCloud macOS iOS tvOS"
    " watchOS eBay IntelliJ VSCode WebAssembly WebSocket WebSockets GraphQL OAuth"
    " DuckDuckGo StackOverflow CloudFlare Cloudflare HuggingFace OpenAPI AirBnB"
    " Node.js Vue.js Next.js Nuxt.js React.js Three.js Chart.js D3.js Express.js"
    # encodings and algorithms
    " SHA256 SHA384 SHA512 SHA224 X509 ISO8601 UTF-8 UTF-16 UTF-32 SHA-256 SHA-512"
    " SHA-384 ISO-8859 AES-256 AES-128 RSA-2048 P-256 BASE64 INT64 INT32 FLOAT32"
    " FLOAT64 UINT64 UINT32"
    # English pairs written with a slash
    " and/or read/write input/output yes/no true/false client/server on/off w/o"
    " I/O i/o TCP/IP n/a N/A either/or he/she his/her him/her pros/cons"
    " before/after start/end open/close".split()
)

_EXTENSIONS = (
    "py|pyi|ipynb|md|rst|txt|log|json|jsonl|toml|yaml|yml|cfg|ini|conf|env|lock|csv|tsv"
    "|xml|html|css|scss|sh|bash|zsh|js|mjs|cjs|jsx|ts|tsx|rs|go|c|h|cc|cpp|hpp|java|kt"
    "|rb|php|swift|sql|proto|tf|gradle|patch|diff|traj|pem|db|sqlite"
)
# File names with no extension that name a file by themselves.
_BARE_FILES = "Makefile|Dockerfile|Gemfile|Rakefile|Procfile|Jenkinsfile|Vagrantfile"
_FILE_NAME = rf"[\w.@+-]*\w\.(?:{_EXTENSIONS})|{_BARE_FILES}"
# A slashed path: optionally rooted (/, ~/, ./, ../), two components or more.
_SLASHED = (
    r"(?:~/|\.\.?/|/)?(?:[\w.@+-]+/)+[\w.@+-]*\w/?"
    r"|/[\w.@+-]*[A-Za-z](?:[\w.@+-]*\w)?"  # one level: /tmp, /testbed
)
_PATH_BODY = rf"(?:{_SLASHED}|(?<![\w.-])(?:{_FILE_NAME}))"
_BEFORE_PATH = r"(?<![\w.~/@+<\\-])"  # not </tag>, not \n

_UNIT = (
    r"%|ms|s|us|ns|sec|secs|seconds?|mins?|minutes?|h|hours?|days?|[KMGT]i?B|kB|B|px"
    r"|x|(?: (?:bytes?|tokens?|lines?|files?|tests?|errors?|warnings?|failed|failures?"
    r"|passed|skipped|matches|objects|hunks|rows|items|calls|chars|characters|words"
    r"|insertions?|deletions?|changed|commits?|records|steps|retries|attempts"
    r"|messages|results|issues|packages|modules|functions|occurrences))"
)
# Each pattern below that can begins with a literal or a character class, and says
# what may not come before it with a lookbehind after that first character: the
# regular-expression engine then jumps from candidate to candidate instead of trying
# every position (a long log is megabytes of text).
_NUMBER_START = r"[\w.,#:/\\-]"  # what may not come before a number
_NUMBER_BODY = (
    rf"\d(?<!{_NUMBER_START}\d)(?:"
    r"\d{3}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?Z?)?"  # a date, a time
    r"|\d?:\d{2}(?::\d{2})?"  # a clock time
    r"|(?<=0)x[0-9a-fA-F]+"  # hexadecimal
    r"|\d*/\d+(?![\w/])"  # a fraction, a ratio
    r"|\d{0,2}(?:,\d{3})+(?:\.\d+)?"  # grouped
    r"|\d*(?:\.\d+)*"
    r")"
    rf"|v(?<!{_NUMBER_START}v)\d+(?:\.\d+)+"  # a version
    rf"|#(?<!{_NUMBER_START}#)\d+"  # an issue or pull request
)


def _words(words) -> str:
    """An alternation of whole words, grouped by first letter (each group begins with
    its letter, so the engine can jump to candidates)."""
    groups = {}
    for word in sorted(words, key=len, reverse=True):
        groups.setdefault(word[0], []).append(re.escape(word[1:]))
    return "|".join(
        rf"{first}(?<!\w{first})(?:{'|'.join(rest)})\b"
        for first, rest in sorted(groups.items())
    )


# A pattern that begins with a lookbehind (a path, a setting, an identifier) is tried
# at every position of the text. Each lookahead below is a cheap condition that every
# match of its pattern meets, so most positions are given up after one look instead of
# after every alternative: a path holds a dot or a slash, or is a bare file name; a
# setting's key runs to its "="; an identifier holds a dot or an underscore, or an
# inner capital. A lookahead consumes nothing and every match meets it, so it changes
# no match (tests/test_fact_rule.py compares each pattern with and without it).
_QUICK = {
    "path": r"(?=[\w@+~-]*[./]|["
    + "".join(sorted({name[0] for name in _BARE_FILES.split("|")}))
    + "])",
    "setting": r"(?=[\w.-]*\s?=)",
    "identifier": r"(?=\w*[._]|[A-Za-z][a-z0-9]*[A-Z])",
}


def _compiled(quick: bool = True) -> Tuple[Tuple[str, "re.Pattern"], ...]:
    """The patterns in order: a span one pattern claims is not matched again by a
    later one. `quick` False leaves the lookaheads of `_QUICK` out (the test's
    reference)."""
    ahead = _QUICK if quick else dict.fromkeys(_QUICK, "")
    return (
        (
            "url",
            re.compile(r"http(?<!\whttp)s?://[^\s<>\"'`)\]}]+[^\s<>\"'`)\]},.;:!?]"),
        ),
        (  # a path, and a file:line when a line number follows it
            "path",
            re.compile(
                rf"{_BEFORE_PATH}{ahead['path']}(?P<path>{_PATH_BODY})"
                r"(?:(?P<line>:\d+(?::\d+)?)(?![\w/]|[.:]\d)|(?![\w@+-]))"
            ),
        ),
        (
            "hash",  # a UUID, or a lowercase hexadecimal run (digit and letter: _kept)
            re.compile(
                r"[0-9a-fA-F](?<!\w[0-9a-fA-F])(?:[0-9a-fA-F]{7}-[0-9a-fA-F]{4}-"
                r"[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
                r"|(?<=[0-9a-f])[0-9a-f]{6,63}\b)"
            ),
        ),
        (
            "setting",
            re.compile(
                rf"(?<![\w.=!<>-]){ahead['setting']}"
                r"(?:(?P<key>--?[A-Za-z][\w.-]*|[A-Za-z_][\w.]*[_.][\w.]*)"
                r"\s?=\s?(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[\w./:@+-]*\w)"
                r"|(?P<word>[A-Za-z]\w{2,})=(?![=\s])(?:\"[^\"\n]*\"|'[^'\n]*'"
                r"|[\w./:@+-]*\w))"
            ),
        ),
        (
            "error code",
            re.compile(
                r"\[Errno \d+\]"
                r"|e(?<!\we)(?:rrno \d+|xit (?:code|status) \d+)\b"
                # CVE-2024-3094, PROJ-123; E501, TS2345
                r"|[A-Z](?<!\w[A-Z])(?:[A-Z0-9]*-\d{2,}(?:-\d+)*|[A-Z]{0,4}\d{3,6})\b"
                rf"|{_words(CODE_WORDS)}"
            ),
        ),
        (
            "number",
            re.compile(
                rf"(?:{_NUMBER_BODY})(?:\s?(?:{_UNIT}))?(?![\w:/-]|[.,]\d)"
                r"|l(?<!\wl)ines? \d+(?:-\d+)?\b"
            ),
        ),
        (
            "identifier",
            re.compile(
                rf"(?<![\w.\\</-]){ahead['identifier']}(?:"  # not a <tag>
                r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # dotted
                r"|__[A-Za-z]\w*?__"  # dunder
                r"|_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*"  # snake, CONSTANT
                r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"  # camelCase
                r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # PascalCase, an inner capital
                r")(?![\w>-])"
            ),
        ),
    )


_PATTERNS = _compiled()


# A pattern's pass is skipped over a text that lacks what every match of it holds.
_NEEDS = {"url": "http", "setting": "="}
_WORD_PAIR = re.compile(r"[A-Za-z]+/[A-Za-z]+")
_LETTER = re.compile(r"[A-Za-z]")
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_DIGIT = re.compile(r"\d")
_HEX_LETTER = re.compile(r"[a-f]")
_PADDED = re.compile(r"0\d+")


def _kept(kind: str, fact: str) -> bool:
    """Whether a match of `kind` is a fact (the stop list, and the kinds' own limits)."""
    if fact in STOP:
        return False
    if kind == "path" and _WORD_PAIR.fullmatch(fact):
        return fact.split("/")[0] in _SOURCE_FOLDERS  # "src/app", not "and/or"
    if kind == "path" and not _LETTER.search(fact):
        return False  # digits and slashes: a fraction or a date
    if kind == "hash" and "-" not in fact:
        return bool(_DIGIT.search(fact)) and bool(_HEX_LETTER.search(fact))
    if kind == "number":
        return _is_number_fact(fact)
    if kind == "setting":
        return _is_setting_fact(fact)
    return True


_SOURCE_FOLDERS = frozenset(
    "src lib libs tests test docs doc app apps bin pkg cmd scripts config configs data"
    " build dist out internal include vendor assets static templates examples tools"
    " notebooks bench".split()
)


def _is_setting_fact(fact: str) -> bool:
    """A value that is a literal (a number, a quoted string, a boolean, a path, a word
    with a digit); a bare name is kept only after an option or an upper-case key
    (`--mode=fast`, `LOG_LEVEL=debug`): `page=page`, `key=lambda` and
    `self.site = site` are code passing a variable, not a setting."""
    key, value = (part.strip() for part in fact.split("=", 1))
    if _NAME.fullmatch(value) and not _DIGIT.search(value):
        if value in _LITERAL_WORDS or key.startswith("-"):
            return True
        return key.isupper() and "." not in value  # not FLAGS = re.compile
    return True


_LITERAL_WORDS = frozenset(
    "true false True False TRUE FALSE None null nil yes no on off".split()
)


def _is_number_fact(fact: str) -> bool:
    """Three or more digits, a unit, or a marker that says what the number is; a
    zero-padded counter (`00001|`, a line-numbering margin) is not written back."""
    if _PADDED.fullmatch(fact):
        return False
    if not fact[-1].isdigit() or fact.startswith(("v", "#", "0x", "line")):
        return True  # a unit after it, or a version, issue, hex or line number
    # a bare number or fraction needs three digits: "3/10 runs failed", not a "1/4"
    return sum(character.isdigit() for character in fact) >= 3


_MARGIN_AFTER = ("→", "\t")  # Claude Code's Read writes "   930→", cat -n "   930\t"


def _is_margin(text: str, start: int, end: int) -> bool:
    """A line number a tool wrote before each line it shows (only spaces before it on
    its line, an arrow or a tab after it): where the text is, not what it says."""
    if not text.startswith(_MARGIN_AFTER, end):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return not text[line_start:start].strip(" ")


def facts(text: str) -> List[Tuple[str, str]]:
    """The facts `text` names, as (fact, kind) in the order it names them. Each fact
    is a substring of `text` (a hash is cut to its first `SHORT_HASH` characters); a
    file:line's path and a setting's identifier key follow it as facts of their own."""
    return [(fact, kind) for _, _, fact, kind in _found(text)]


class Found(NamedTuple):
    """One fact found: where its match starts in the text, the fact, its kind."""

    start: int
    fact: str
    kind: str


def find_facts(text: str) -> List[Found]:
    """`facts`, with where each one's match starts in `text`."""
    return [Found(start, fact, kind) for start, _, fact, kind in _found(text)]


def _found(text: str) -> List[Tuple[int, int, str, str]]:
    """(where its match starts, 0 or 1 for a fact inside another, fact, kind) for
    each fact of `text`, in order."""
    found = []  # (position, order, fact, kind)
    taken = bytearray(len(text))  # characters a fact already claimed
    for pattern_kind, pattern in _PATTERNS:
        if _NEEDS.get(pattern_kind, "") not in text:
            continue  # no setting without "=": the pass is skipped
        has_inner = pattern_kind in ("path", "setting")
        for match in pattern.finditer(text):
            start, end = match.span()
            if taken.find(1, start, end) != -1:
                continue  # a fact already claimed part of it
            fact, kind = match.group(), pattern_kind
            if has_inner and kind == "path" and match.group("line"):
                kind = "file:line"
            if not _kept(kind, fact):
                continue
            if kind == "number" and _is_margin(text, start, end):
                continue
            taken[start:end] = b"\x01" * (end - start)
            if kind == "hash" and "-" not in fact:
                fact = fact[:SHORT_HASH].lower()
            found.append((start, 0, fact, kind))
            inner = _inner_fact(kind, match) if has_inner else None
            if inner is not None:
                found.append((start, 1) + inner)
    found.sort()
    return found


# Where a fact may run across a line break: only the optional whitespace around a
# setting's "=" (`key\n= 3`) and before a number's unit (`300\nms`) matches one. At
# any other line break no match runs across, no pattern starts, and every lookaround
# reads the break as it reads the text's edge: the facts of a text are the facts of
# its stretches between such breaks, one after another.
_JOINED_BREAK = re.compile(
    rf"\n(?:(?<==\n)|(?==)|(?<=\w\n)(?=(?:{_UNIT})(?![\w:/-]|[.,]\d)))"
)
# Between two stretches given alone: a line break, a character no pattern matches
# next to one, and another line break.
_APART = "\n\x00\n"


def _stretch(text: str, start: int, end: int) -> Tuple[int, int]:
    """The stretch of `text` between breaks no fact runs across that holds
    text[start:end]."""
    before = text.rfind("\n", 0, start)
    while before != -1 and _JOINED_BREAK.match(text, before):
        before = text.rfind("\n", 0, before)
    after = text.find("\n", end)
    while after != -1 and _JOINED_BREAK.match(text, after):
        after = text.find("\n", after + 1)
    return before + 1, len(text) if after == -1 else after


def facts_near(text: str, spans) -> List[Tuple[str, str]]:
    """The facts `facts(text)` names in the lines that hold the (start, end) `spans`
    (a line ends at a break no fact runs across), in order: a long output is read
    only where something was looked for."""
    stretches: List[Tuple[int, int]] = []
    for start, end in spans:  # in order: each stretch begins no earlier than the last
        if stretches and end < stretches[-1][1]:
            continue  # inside the last stretch
        begin, stop = _stretch(text, start, end)
        if stretches and begin <= stretches[-1][1]:
            stretches[-1] = (stretches[-1][0], max(stop, stretches[-1][1]))
        else:
            stretches.append((begin, stop))
    if len(stretches) == 1 and stretches[0] == (0, len(text)):
        return facts(text)
    return facts(_APART.join(text[a:b] for a, b in stretches))


def _inner_fact(kind: str, match: "re.Match") -> Tuple[str, str]:
    """A file:line's path; a setting's key when it is an identifier (snake, dotted)."""
    if kind == "file:line":
        return match.group("path"), "path"
    if kind == "setting" and match.group("key"):
        key = match.group("key")
        if not key.startswith("-") and _kept("identifier", key):
            return key, "identifier"
    return None


def fact_strings(text: str) -> List[str]:
    """The distinct facts of `text`, in the order first named."""
    return list(dict.fromkeys(fact for fact, _ in facts(text)))
