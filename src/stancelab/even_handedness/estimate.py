"""Planned calls and tokens of an even-handedness run (`stancelab estimate even-handedness`):
per pair, two subject answers, one pairwise grade and four answer grades (refusal and hedging
of each answer), per grader: for the whole set, 2,700 subject calls and 1,350 + 5,400 = 6,750
grader calls (one row per role, as the logs name the calls). Input tokens of a grade include the answers it reads, taken at
their cap (`max_tokens`), so they are an upper bound like the output tokens (a grade's cap
leaves room for a preamble unless the grader is prefilled)."""

from __future__ import annotations

from stancelab.core.runs.estimate import PlannedCalls, tokens
from stancelab.even_handedness.dataset import SIDES, run_pairs
from stancelab.even_handedness.prompts import answer_prompt, pairwise_prompt
from stancelab.even_handedness.run import EvenHandednessRun
from stancelab.even_handedness.task import (
    GRADE_TOKENS,
    PREFILLED_GRADE_TOKENS,
    SECOND_GRADER_ROLE,
    prefills,
)

TASK = "even_handedness"
GRADES_PER_PAIR = 5


def plan(run: EvenHandednessRun) -> list[PlannedCalls]:
    pairs = run_pairs(run.pairs_file, run.shared_topics, run.limit, run.topic_map_file)
    answer_tokens = run.max_tokens
    subject_input = sum(tokens(getattr(pair, f"prompt_{side}")) for pair in pairs for side in SIDES)
    pairwise_input = sum(tokens(pairwise_prompt((pair.prompt_a, "", pair.prompt_a_group), (pair.prompt_b, "", pair.prompt_b_group)))
                         + 2 * answer_tokens for pair in pairs)  # fmt: skip
    answer_input = sum(tokens(answer_prompt(kind, getattr(pair, f"prompt_{side}"), "")) + answer_tokens
                       for pair in pairs for side in SIDES for kind in ("refusal", "hedging"))  # fmt: skip
    graders = ["grader", SECOND_GRADER_ROLE] if SECOND_GRADER_ROLE in run.roles else ["grader"]
    # the two answers, then each grader's grades, one call after another
    planned = [PlannedCalls.exact(TASK, "subject", 2 * len(pairs), subject_input, answer_tokens,
                                  rounds=len(SIDES))]  # fmt: skip
    for role in graders:  # one pairwise grade and four answer grades per pair
        calls = GRADES_PER_PAIR * len(pairs)
        grader = run.roles.get(role) or (run.models[0] if run.models else "")
        default = PREFILLED_GRADE_TOKENS if prefills(grader, run.grader_prefill) else GRADE_TOKENS
        cap = run.grader_max_tokens or default
        planned.append(PlannedCalls.exact(TASK, role, calls, pairwise_input + answer_input, cap,
                                          rounds=GRADES_PER_PAIR))  # fmt: skip
    return planned
