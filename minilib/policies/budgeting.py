"""Input-side budgeting: fit the fixed part of every request (system prompt, tool
declarations) to a budget.

The other paths cut history; this one cuts what is sent again on every round no
matter what happened: optional system-prompt sections and tool declarations. The
harness builds its system prompt from sections, so it knows which ones are
required (identity, goal, the tools the task needs) and which are optional (style
guides, examples, rarely used tools). Required sections are never cut; optional
ones are kept by priority while the prompt fits `budget_tokens`.

It is the only path that may rewrite the protected system message, and only in
one way: from the full prompt it built to the budgeted prompt it built. Any other
system message is left alone, so it never cuts text whose status it does not know.
"""

import json
from dataclasses import dataclass, field
from typing import List, Mapping, Sequence

from ..messages import check_int
from ..strategy import CompressionResult
from ..tokens import TokenCounter, estimate_tokens


@dataclass(frozen=True)
class PromptSection:
    """One part of the system prompt. Higher `priority` is kept first
    among optional sections."""

    name: str
    text: str
    required: bool = False
    priority: int = 0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(
                f"prompt section name must be a non-empty string, got {self.name!r}"
            )
        if not isinstance(self.text, str) or not self.text:
            raise ValueError(
                f"prompt section {self.name!r}: text must be a non-empty string"
            )
        check_int(
            f"prompt section {self.name!r} priority", self.priority, minimum=-(10**6)
        )


def declaration_section(
    declaration: Mapping, *, required: bool, priority: int = 0
) -> PromptSection:
    """A chat-completions tool declaration as a prompt section: providers count its tokens
    like prompt text."""
    try:
        name = declaration["function"]["name"]
    except (KeyError, TypeError):
        raise ValueError(
            f"tool declaration needs function.name, got {declaration!r}"
        ) from None
    return PromptSection(
        f"tool:{name}", json.dumps(declaration, ensure_ascii=False), required, priority
    )


@dataclass
class InputBudgeting:
    """Rewrite the full system prompt to the sections that fit `budget_tokens` (required
    ones always)."""

    sections: Sequence[PromptSection]
    budget_tokens: int
    count_tokens: TokenCounter = estimate_tokens
    name: str = "input_budgeting"
    kept: List[PromptSection] = field(init=False, repr=False)

    def __post_init__(self):
        check_int("budget_tokens", self.budget_tokens)
        names = [section.name for section in self.sections]
        if not names:
            raise ValueError("InputBudgeting needs at least one prompt section")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(
                f"prompt section names must be unique; repeated: {', '.join(duplicates)}"
            )
        self.kept = self._choose()

    @staticmethod
    def render(sections: Sequence[PromptSection]) -> str:
        return "\n\n".join(section.text for section in sections)

    def prompt_tokens(self, sections: Sequence[PromptSection]) -> int:
        return self.count_tokens([{"role": "system", "content": self.render(sections)}])

    def _choose(self) -> List[PromptSection]:
        chosen = {section.name for section in self.sections if section.required}
        optional = sorted(
            (s for s in self.sections if not s.required), key=lambda s: -s.priority
        )  # stable
        for section in optional:
            trial = [
                s for s in self.sections if s.name in chosen or s.name == section.name
            ]
            if self.prompt_tokens(trial) <= self.budget_tokens:
                chosen.add(section.name)
        return [
            section for section in self.sections if section.name in chosen
        ]  # original order

    @property
    def full_prompt(self) -> str:
        return self.render(self.sections)

    @property
    def budgeted_prompt(self) -> str:
        return self.render(self.kept)

    @property
    def dropped(self) -> List[str]:
        kept = {section.name for section in self.kept}
        return [section.name for section in self.sections if section.name not in kept]

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """Return a new list whose first message is the budgeted prompt, if it was the
        full one."""
        result = list(messages)
        if (
            not messages
            or messages[0].get("role") != "system"
            or messages[0].get("content") != self.full_prompt
            or self.budgeted_prompt == self.full_prompt
        ):
            return CompressionResult(self.name, result, [])
        result[0] = dict(messages[0], content=self.budgeted_prompt)
        return CompressionResult(self.name, result, [0])
