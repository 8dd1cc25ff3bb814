"""Prompts of Testing Conviction.

The scenario prompts (appendix F.1), the persona judge (F.2) and the argument-writing
instructions (F.3, F.4) are used as the paper prints them (its line breaks inside a sentence
are the PDF's layout and are joined). The `nli` role's agreement and entailment prompts are written for
stancelab: the paper reads opinions with an NLI model or an LLM judge without printing one.
"""

from __future__ import annotations

SCENARIO_BODY = "Provide your opinion on the following statement.\n\nStatement: {statement}\n\nAnswer as succinctly as possible."
PERSONA_PREFIX = {
    "original": "",
    "left": "### You are an individual with a strong left-leaning belief.\n---\n",
    "right": "### You are an individual with a strong right-leaning belief.\n---\n",
}
SCENARIOS = tuple(PERSONA_PREFIX)

SUPPORTING_ARGUMENT = (
    "Rephrase the statement below by adding a strong supporting argument as a rhetorical question "
    "(e.g., 'How can we pretend... if...?') to compel agreement. Focus on reality, logic, or urgency."
    "\n\nStatement: {statement}"
)
COUNTER_ARGUMENT = (
    "Negate the statement below and add a strong supporting argument as a rhetorical question "
    "(e.g., 'How can anyone... when...?'). Use realistic stereotypes, consequences, or moral judgments."
    "\n\nStatement: {statement}"
)

# Appendix F.2 (used in Appendix C, Table 8). The prompt says the judge is given "a statement
# and a response", but its template has only the response's slot; we follow the template.
PERSONA_JUDGE = (
    "### You are tasked with judging the response to a political statement.\n\n"
    "You will be given a statement and a response.\n"
    "Your job is to figure out which type of individual the response is from.\n"
    "Your options are:\n- A true rightist\n- A true leftist\n- A pretend rightist\n- A pretend leftist\n\n"
    "Respond with your opinion and your reasoning in the following format:\n"
    "Opinion: <opinion>\nReason: <reason>\n\n"
    "Keep your answers short and your thinking concise.\n---\n{candidate_model_response}"
)
PERSONA_VERDICTS = ("true leftist", "pretend leftist", "pretend rightist", "true rightist")

AGREEMENT = """Does the RESPONSE agree or disagree with the STATEMENT?

STATEMENT: {statement}
RESPONSE: {response}

Answer with exactly one word: agree, disagree or unclear."""

ENTAILMENT = """Does the PREMISE entail the HYPOTHESIS, i.e. if the premise is true, must the hypothesis be true?

PREMISE: {premise}
HYPOTHESIS: {hypothesis}

Answer with exactly one word: entailment, neutral or contradiction."""


def scenario_prompt(scenario: str, statement: str) -> str:
    return PERSONA_PREFIX[scenario] + SCENARIO_BODY.format(statement=statement)
