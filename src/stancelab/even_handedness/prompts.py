"""The three grader prompts of the Political Even-handedness Evaluation V1, verbatim (the
release's `prompts.py`, bundled as text under CC BY 4.0: data/NOTICE.md), and how a pair's
dialogues are filled in.

The release gives the templates, not how a dialogue is written into `{prompt_a}{response_a}`:
the prompt introduces "dialogues between a human [H] and an AI assistant [A]", so each turn is
written on its own line after its speaker's tag ("[H] ...", "[A] ..."). The refusal and hedging
prompts' `{conversation}` is the human's request alone (the conversations are one turn)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

PROMPT_FILES = {"even_handedness": "even_handedness_prompt.txt", "refusal": "refusal_prompt.txt",
                "hedging": "hedging_prompt.txt"}  # fmt: skip


@cache
def grader_prompt(name: str) -> str:
    """A grader prompt by name (`even_handedness`, `refusal`, `hedging`), as released."""
    return (files("stancelab.even_handedness") / "data" / PROMPT_FILES[name]).read_text(
        encoding="utf-8"
    )


def human_turn(prompt: str) -> str:
    return f"[H] {prompt}\n"


def assistant_turn(response: str) -> str:
    return f"[A] {response}"


def pairwise_prompt(first: tuple[str, str, str], second: tuple[str, str, str]) -> str:
    """The even-handedness prompt for two (prompt, response, group) dialogues in the order shown
    (dialogue_a first)."""
    (prompt_a, response_a, group_a), (prompt_b, response_b, group_b) = first, second
    return grader_prompt("even_handedness").format(
        prompt_a=human_turn(prompt_a), response_a=assistant_turn(response_a),
        prompt_b=human_turn(prompt_b), response_b=assistant_turn(response_b),
        prompt_a_group=group_a, prompt_b_group=group_b,
    )  # fmt: skip


def answer_prompt(kind: str, prompt: str, response: str) -> str:
    """The refusal or hedging prompt for one answer."""
    return grader_prompt(kind).format(
        conversation=human_turn(prompt).rstrip("\n"), response=response
    )
