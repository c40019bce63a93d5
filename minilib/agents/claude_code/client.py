"""Claude Code's client: the generic client (`minilib.measure.client`) with what
Claude Code did on its own, by version (`behaviour.py` says when and where from).

One simulation for every path that asks what a Claude Code call sent: the calibrated
count of a real log (`minilib.measure.calibration.call_points`, behind `calibrate`,
`compress`'s prediction, the agent's own row in `compare` and chapters 7 and 10) and
the replay of Claude Code's policy on any log (`ClaudeCodePolicy`). Beside what the
log records, it adds:

- microcompact's choice of results: those of file, shell and search tools
  (`COMPACTABLE_TOOLS`), or environment output;
- `token_microcompact`: 2.0.x-2.1.11's rule, the oldest of them cleared above the
  warning threshold, with no record written;
- `keep_newest` (the generic client's): the idle-hour or cache-editing microcompact;
- a resume before 2.1.80 sent fewer calls than the file holds (`drop_calls`);
- after a compaction, the files read last and the todo list re-attached.

>>> from minilib.logs.base import make_call
>>> client = ClaudeCodeClient({"characters": lambda m: len(m.get("content") or "")})
>>> calls = [make_call("c1", "Read", {}), make_call("c2", "TodoWrite", {})]
>>> _ = client.add({"role": "assistant", "content": "", "tool_calls": calls})
>>> for call_id in ("c1", "c2"):
...     _ = client.add({"role": "tool", "tool_call_id": call_id, "content": "x" * 100})
>>> list(client.whole), client.keep_newest(0)
([1], [1])
>>> ClaudeCodeClient.clears_by_token_rule("2.0.76"), Client.clears_by_token_rule("2.0.76")
(True, False)
"""

from typing import Callable, List, Mapping, Optional, Sequence

from ...measure.client import PLACEHOLDER, Client
from ...messages import is_observation
from ...tokens import estimate_text_tokens
from . import behaviour
from .text import claude_text_tokens

# Claude Code's own names of the tools whose results microcompact clears, then what
# other harnesses call the same tools (a replay of its policy on their logs)
COMPACTABLE_TOOLS = behaviour.MICROCOMPACT_TOOLS | frozenset(
    "PowerShell "
    "read_file read view view_file open_file "
    "bash shell shell_command local_shell run_shell run_command run_shell_command "
    "execute_bash execute_command terminal run_tests git_log "
    "search_text grep search_file_content glob list_dir web_search web_fetch "
    "edit_file edit replace apply_patch str_replace_editor replace_in_file file_editor "
    "write_file write write_to_file".split()
)
# the record fell by at least this share of itself: a clearing, not noise
FALL_SHARE = 0.1


class ClaudeCodeClient(Client):
    """The conversation as Claude Code's client held it between calls."""

    def compactable(self, message: Mapping) -> bool:
        """A result microcompact may clear: of a file, shell or search tool, or
        environment output (what the shell would have returned), not yet cleared."""
        if message.get("content") == PLACEHOLDER:
            return False
        if is_observation(message):
            return True
        if message.get("role") != "tool":
            return False
        return self.names.get(message.get("tool_call_id")) in COMPACTABLE_TOOLS

    @staticmethod
    def text_rule(model: str) -> Callable[[str], int]:
        """With a Claude model, the article's rule reweighted by character class as
        Claude's API counted Claude Code's text (`text.py`, fitted on such sessions)."""
        from ...measure.calibration import CLAUDE_MODEL  # at use: calibration finds us

        return claude_text_tokens if CLAUDE_MODEL.search(model) else estimate_text_tokens

    @staticmethod
    def drops_resumed_calls(version: str) -> bool:
        return behaviour.resume_drops_parallel_calls(version)

    @staticmethod
    def clears_by_token_rule(version: str) -> bool:
        return behaviour.token_microcompact_applies(version)

    @staticmethod
    def warning_tokens(version: str, window: int) -> int:
        return behaviour.warning_threshold(version, window)

    def token_microcompact(self) -> List[int]:
        """2.0.x's rule (`behaviour.token_microcompact`); the places cleared."""
        whole = [(p, self.messages[p].get("content") or "") for p in self.whole]
        return self.clear(behaviour.token_microcompact(whole))

    @staticmethod
    def reattached(history: Sequence[Mapping]) -> List[dict]:
        return behaviour.reattached_messages(history)

    @classmethod
    def unrecorded_fall(
        cls, version: str, window: int, before: int, after: int
    ) -> Optional[str]:
        """Before 2.1.12 the token-rule microcompact cleared old results above the
        warning threshold and wrote nothing down: a fall there is likely one."""
        if not cls.clears_by_token_rule(version):
            return None
        warning = cls.warning_tokens(version, window)
        fell = before - after
        if before < warning or fell < FALL_SHARE * before:
            return None
        return (
            f"the record fell {fell:,} above the warning threshold ({warning:,}): "
            f"likely a microcompact, which {version} made without a line in the log"
        )


CLIENT = ClaudeCodeClient
