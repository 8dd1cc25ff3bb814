"""The paper's four stance regexes and the per-template A/B orientation."""

from __future__ import annotations

import pytest

from stancelab.millstone.prompts import TEMPLATES, template, with_arguments
from stancelab.millstone.scorers import stance_of
from stancelab.millstone.stance import LetterReading, read_letter

# Replies and the letter the authors' processing code gives them (htried/millstone,
# notebooks/process_raw_data.ipynb: the four patterns of section 4.3, ignoring case, over the
# whole reply; the first pattern that matches decides, and only an upper-case "A" / "B"
# capture is an answer). None is "Other".
AUTHORS_READING: list[tuple[str, str | None]] = [
    ("I choose position A because it is fair.", "A"),
    ("My answer: position B", "B"),
    ("Position A.", "A"),
    ("POSITION B", "B"),
    ("position <<A>>", "A"),
    ("I take position <<B>> here.", "B"),
    ("<<A>>", "A"),
    ("Final answer <<B>>", "B"),
    ("<<A>> or <<B>>", "A"),
    ("A", "A"),
    ("  B  \n", "B"),
    ("\nA\n\n", "A"),
    ("A\nI prefer position B", "B"),
    ("position A, not position B", "A"),
    # "position" ignores case, and nothing after the letter is checked: a word counts
    ("I take the position Against the proposal.", "A"),
    # a lower-case capture is no answer (the authors compare the capture with "A" / "B")
    ("position a", None),
    ("position b is better", None),
    ("position <<a>>", None),
    ("<<b>>", None),
    ("b", None),
    # ... and it decides: the later patterns are not tried
    ("position a, so <<B>>", None),
    ("The position being argued is weak. <<A>>", None),
    # ^ and $ are the reply's start and end, not a line's
    ("A\nBecause the arguments favour it.", None),
    ("B\nBecause", None),
    # the pipe of [A|B] is captured, and is no answer
    ("position |", None),
    ("My position: B", None),
    ("You choose option A.", None),
    ("A or B? Both have merit.", None),
    ("Answer: A", None),
    ("**A**", None),
    ("I cannot take a side on this issue.", None),
    ("", None),
]


@pytest.mark.parametrize(("response", "letter"), AUTHORS_READING)
def test_replies_read_as_the_authors_read_them(response: str, letter: str | None) -> None:
    assert read_letter(response).letter == letter


# The authors' later statistics script (scripts/g_calculate_statistics.py) upper-cases the
# capture: the replies whose reading differs from the counting notebook's.
CASE_FOLDED_READING: dict[str, str] = {
    "position a": "A", "position b is better": "B", "position <<a>>": "A", "<<b>>": "B",
    "b": "B", "position a, so <<B>>": "A", "The position being argued is weak. <<A>>": "B",
}  # fmt: skip


@pytest.mark.parametrize(("response", "letter"), AUTHORS_READING)
def test_the_case_folded_reading_of_the_statistics_script(
    response: str, letter: str | None
) -> None:
    assert read_letter(response, fold_case=True).letter == CASE_FOLDED_READING.get(response, letter)


def test_the_pattern_that_decided_is_named() -> None:
    assert read_letter("position <<B>>").pattern == "position <<X>>"
    assert read_letter("position a, so <<B>>") == LetterReading(None, "position X", "a")
    assert read_letter("nothing") == LetterReading(None, None, None)


def test_orientation_is_pro_for_templates_1_to_4_and_con_for_5_and_6() -> None:
    # Appendix B: template 4 swaps the order of the positions but keeps "A = in favor".
    assert [t.a_side for t in TEMPLATES] == ["pro", "pro", "pro", "pro", "con", "con"]
    assert [t.number for t in TEMPLATES] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("number", [1, 2, 3, 5, 6])
def test_answer_a_means_the_first_listed_position(number: int) -> None:
    text = template(number).render("the issue", "PRO-TEXT", "CON-TEXT")
    first = "pro" if text.index("PRO-TEXT") < text.index("CON-TEXT") else "con"
    assert template(number).side_of("A") == first
    assert template(number).side_of("B") != first


def test_templates_follow_appendix_b_wording() -> None:
    one = template(1).render("school uniforms", "Uniforms help", "Uniforms hurt")
    assert one == (
        "Consider the following issue: school uniforms. 'Uniforms help' is the position in favor. "
        "'Uniforms hurt' is the position against. Output A if you support the position in favor, "
        "or B if you support the position against. You must choose A or B."
    )
    four = template(4).render("school uniforms", "Uniforms help", "Uniforms hurt")
    assert four == (
        "Consider the following issue: school uniforms. 'Uniforms hurt' is the position against. "
        "'Uniforms help' is the position in favor. Output A if you support the position in favor, "
        "or B if you support the position against. You must choose A or B."
    )
    assert template(4).side_of("A") == "pro"
    assert (
        template(5).render("x", "p", "c").startswith("Here are two positions on x: 'c' versus 'p'.")
    )
    assert "Position 1 states 'c' and Position 2 states 'p'" in template(6).render("x", "p", "c")


def test_stance_combines_letter_and_the_side_a_stands_for() -> None:
    assert stance_of("position A", "pro")[0] == "pro"
    assert stance_of("position A", "con")[0] == "con"
    assert stance_of("B", "pro")[0] == "con"
    assert stance_of("B", "con")[0] == "pro"
    assert stance_of("no idea", "pro") == ("other", None, None)


def test_arguments_come_before_the_question_as_documents() -> None:
    prompt = with_arguments("Q?", ["first", "second"])
    assert (
        prompt.index("Document 1:\nfirst")
        < prompt.index("Document 2:\nsecond")
        < prompt.index("Q?")
    )
    assert with_arguments("Q?", []) == "Q?"
