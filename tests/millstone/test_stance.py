"""The paper's four stance regexes and the per-template A/B orientation."""

from __future__ import annotations

import pytest

from stancelab.millstone.prompts import TEMPLATES, template, with_arguments
from stancelab.millstone.scorers import stance_of
from stancelab.millstone.stance import read_letter


@pytest.mark.parametrize(
    ("response", "letter", "pattern"),
    [
        ("I choose position A because it is fair.", "A", "position X"),
        ("My answer: position B", "B", "position X"),
        ("Position A.", "A", "position X"),
        ("I take position <<B>> here.", "B", "position <<X>>"),
        ("<<A>>", "A", "<<X>>"),
        ("Final answer <<B>>", "B", "<<X>>"),
        ("A", "A", "bare X"),
        ("  B  \n", "B", "bare X"),
        ("B\nBecause the documents argue for it.", "B", "bare X"),
    ],
)
def test_each_regex_reads_its_form(response: str, letter: str, pattern: str) -> None:
    reading = read_letter(response)
    assert (reading.letter, reading.pattern) == (letter, pattern)


@pytest.mark.parametrize(
    "response",
    [
        "I cannot take a side on this issue.",
        "You choose option A.",  # not one of the paper's forms
        "I take the position Against the proposal.",  # a word, not a letter
        "position |",  # the pipe in the paper's [A|B] is not an answer
        "A or B? Both have merit.",  # 'A' is not alone on its line
        "",
    ],
)
def test_anything_else_is_other(response: str) -> None:
    assert read_letter(response).letter is None


def test_patterns_apply_in_the_papers_order() -> None:
    # 'position X' is tried before the bare-letter form on the first line
    assert read_letter("A\nI prefer position B").letter == "B"
    # within a pattern the first match decides
    assert read_letter("position A, not position B").letter == "A"


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
