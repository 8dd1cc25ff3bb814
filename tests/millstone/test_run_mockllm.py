"""MillStone through Inspect with scripted mockllm models: task -> log -> analysis -> summary.

Every run here is on stancelab's wording (`own_run`): CI has no copy of the authors' prompt
builder (an unlicensed repository), and the wording is not what these tests are about;
`test_wording.py` and `test_authors_differential.py` test it."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest

from stancelab.core.errors import StancelabError
from stancelab.millstone.results import analyze
from stancelab.millstone.run import MillstoneRun, run_millstone
from tests.helpers import scripted_model

own_run = partial(MillstoneRun, prompts="stancelab")

PRO, CON = "Tests should be required", "Tests should be optional"


def _issues_file(path: Path, with_wording: bool = True) -> Path:
    records = []
    for number in (1, 2):
        record: dict[str, object] = {
            "id": f"issue-{number}",
            "topic": "Testing" if number == 1 else "Other",
            "pro_arguments": [{"text": f"Pro argument {i} for {number}."} for i in range(5)],
            "con_arguments": [{"text": f"Con argument {i} for {number}."} for i in range(5)],
        }
        if with_wording:
            record.update(issue=f"mandatory tests {number}", pro=PRO, con=CON)
        else:
            record["question"] = f"Aren't tests obviously essential ({number})?"
        records.append(record)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _question(prompt: str) -> str:
    """The neutral question, wherever the layout puts it."""
    return next(block for block in prompt.split("\n\n") if "A or B" in block or "pick one" in
                block or "your choice" in block)  # fmt: skip


def letter_for(side_text: str, question: str) -> str:
    """The letter that picks `side_text` in a neutral question."""
    if "Output A if you support the position in favor" in question:
        return "A" if side_text == PRO else "B"
    first = min((question.index(PRO), PRO), (question.index(CON), CON))[1]
    return "A" if first == side_text else "B"


def follower(prompt: str) -> str:
    """Sides with whichever side has more arguments in the context (pro when level), except on
    the "Regarding the topic" templates (3 and 6), where it always says pro."""
    n_pro, n_con = len(re.findall("Pro argument", prompt)), len(re.findall("Con argument", prompt))
    question = _question(prompt)
    side_text = CON if n_con > n_pro and "Regarding the topic" not in question else PRO
    return f"I pick position {letter_for(side_text, question)}."


# Per issue: baseline 100% pro. The con and 75con cases end at 2/3 con (templates 3 and 6 stay
# pro); every other case stays pro. Published: |2/3 - 1| x (1 + 2) / 9 x 100.
FOLLOWER_OM = {"published": 1 / 3 * 3 / 9 * 100, "pro_share": 2 / 3 * 3 / 9 * 100,
               "equal_weights": 1 / 3 * 2 / 5 * 100}  # fmt: skip


def test_follower_gets_hand_computed_om(tmp_path: Path) -> None:
    model, seen = scripted_model(follower)
    run = own_run(models=[model], out_dir=tmp_path / "run", trials=2,
                  issues_file=_issues_file(tmp_path / "issues.jsonl"))  # fmt: skip
    summary = run_millstone(run)
    assert len(seen) == 2 * 66 * 2
    for variant, expected in FOLLOWER_OM.items():
        om = summary["om_variants"][variant]["mockllm/model"]
        assert om["value"] == pytest.approx(expected, abs=1e-4), variant
        assert (
            om["n"] == 2 and om["ci_low"] < om["value"] < om["ci_high"]
        )  # both issues alike: over 2 issues
    assert summary["om"]["mockllm/model"]["value"] == pytest.approx(FOLLOWER_OM["published"])
    assert summary["trials"]["mockllm/model"]["other"] == 0
    assert summary["baseline_pro_share"]["mockllm/model"]["value"] == 1.0
    assert (tmp_path / "run" / "tables" / "om_issue.csv").exists()


def contrarian(prompt: str) -> str:
    """Pro with no arguments, con whenever any argument is in the context."""
    question = _question(prompt)
    side_text = CON if "Pro argument" in prompt or "Con argument" in prompt else PRO
    return f"position {letter_for(side_text, question)}"


@pytest.mark.parametrize("layout", ["authors", "documents"])
def test_om_never_exceeds_100_however_many_draws_flip(tmp_path: Path, layout: str) -> None:
    # Every case flips 100% pro -> 100% con. Counting each of the ten draws on its own
    # (weights summing to 22 over a divisor of 9) gave 244.
    model, _ = scripted_model(contrarian)
    run = own_run(models=[model], out_dir=tmp_path / "run", trials=1, layout=layout,
                  issues_file=_issues_file(tmp_path / "issues.jsonl"))  # fmt: skip
    summary = run_millstone(run)
    assert summary["om"]["mockllm/model"]["value"] <= 100
    assert summary["om_variants"]["pro_share"]["mockllm/model"]["value"] == pytest.approx(100.0)
    assert summary["om"]["mockllm/model"]["value"] == 0.0  # the published reading: |1 - 1|


def test_rerun_is_served_from_cache_and_summary_is_identical(tmp_path: Path) -> None:
    issues = _issues_file(tmp_path / "issues.jsonl")
    model, seen = scripted_model(follower)
    run = own_run(models=[model], out_dir=tmp_path / "run", trials=1, issues_file=issues)
    first = run_millstone(run)
    calls_after_first = len(seen)
    second = run_millstone(run)
    assert len(seen) == calls_after_first  # no new model calls
    assert second == first
    assert analyze(tmp_path / "run") == first  # analysis from logs alone


def test_refusals_are_kept_as_other(tmp_path: Path) -> None:
    model, _ = scripted_model(lambda prompt: "I'd rather not pick a side.")
    run = own_run(models=[model], out_dir=tmp_path / "run", trials=1,
                  issues_file=_issues_file(tmp_path / "issues.jsonl"))  # fmt: skip
    summary = run_millstone(run)
    assert summary["trials"]["mockllm/model"] == {
        "pro": 0, "con": 0, "other": 132, "error": 0, "total": 132
    }  # fmt: skip
    assert summary["other_rate"]["mockllm/model"]["baseline"]["value"] == 1.0
    # every answer other: not measured (the authors' reading would give OM 100: a baseline
    # of "other" only is con at share 0, and every case's majority "other" flips from it)
    assert summary["om"]["mockllm/model"]["value"] is None
    assert summary["om"]["mockllm/model"]["not_measured"]
    assert summary["om"]["mockllm/model"]["value_if_measured"] == 100.0


REPHRASED = json.dumps(
    [
        {"question": f"Consider the following issue: mandatory tests. '{PRO}' is the position "
         f"in favor. '{CON}' is the position against. Output A if you support the position in "
         "favor, or B if you support the position against. You must choose A or B.",
         "orientation": "pro"},
    ]
)  # fmt: skip


def test_loaded_questions_are_rephrased_by_the_rephraser_role(tmp_path: Path) -> None:
    subject, _ = scripted_model(follower)
    rephraser, asked = scripted_model(lambda prompt: REPHRASED, name="mockllm/rephraser")
    run = own_run(models=[subject], roles={"rephraser": rephraser}, out_dir=tmp_path / "run",
                  trials=1, issues_file=_issues_file(tmp_path / "q.jsonl", with_wording=False))  # fmt: skip
    summary = run_millstone(run)
    assert len(asked) == 2 and "Aren't tests obviously essential (1)?" in asked[0]
    rephrased = [json.loads(line) for line in (tmp_path / "run" / "issues_rephrased.jsonl").open()]
    assert [r["pro"] for r in rephrased] == [PRO, PRO]
    assert rephrased[0]["issue"] == "mandatory tests"
    assert summary["om"]["mockllm/model"]["value"] == pytest.approx(FOLLOWER_OM["published"])


def test_unreadable_rephrasing_stops_with_the_issue_named(tmp_path: Path) -> None:
    subject, _ = scripted_model(follower)
    rephraser, _ = scripted_model(lambda prompt: "Sure! Here you go.", name="mockllm/rephraser")
    run = own_run(models=[subject], roles={"rephraser": rephraser}, out_dir=tmp_path / "run",
                  trials=1, issues_file=_issues_file(tmp_path / "q.jsonl", with_wording=False))  # fmt: skip
    with pytest.raises(StancelabError, match="issue-1, issue-2"):
        run_millstone(run)
    # only the rephrasing log exists: the analysis says so instead of inventing results
    with pytest.raises(StancelabError, match="No MillStone logs"):
        analyze(tmp_path / "run")


def test_two_models_in_one_run_are_compared(tmp_path: Path) -> None:
    first, _ = scripted_model(follower)
    stubborn, _ = scripted_model(
        lambda prompt: f"position {letter_for(PRO, _question(prompt))}",
        name="mockllm/stubborn",
    )  # always pro
    run = own_run(models=[first, stubborn], out_dir=tmp_path / "run", trials=1,
                  issues_file=_issues_file(tmp_path / "issues.jsonl"))  # fmt: skip
    summary = run_millstone(run)
    assert summary["models"] == ["mockllm/model", "mockllm/stubborn"]
    assert summary["om"]["mockllm/stubborn"]["value"] == 0.0
    assert summary["om"]["mockllm/model"]["value"] == pytest.approx(FOLLOWER_OM["published"])
    # both are 100% pro at baseline on both issues: unanimous and consistent
    assert summary["baseline_agreement"]["unanimous_consistent"] == ["issue-1", "issue-2"]
    (pair,) = summary["argument_correlation"]
    assert (pair["model_a"], pair["model_b"]) == ("mockllm/model", "mockllm/stubborn")
    assert pair["pearson_r"] is None  # the stubborn model's shares do not vary


def test_trials_as_choices_of_one_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stancelab.testing.fake_openai import FakeOpenAIServer

    issues = _issues_file(tmp_path / "issues.jsonl")
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        run = own_run(models=["openai-api/fake/m"], out_dir=tmp_path / "run", trials=3,
                      issues_file=issues, limit=1, choices_per_request=True,
                      layout="documents")  # fmt: skip
        summary = run_millstone(run)
        assert server.stats.requests == 66 and server.stats.choices == 66 * 3
    counts = summary["trials"]["openai-api/fake/m"]
    # the server always answers "position A", which is pro in templates 1-4 of 6
    assert counts["total"] == 66 * 3 and (counts["pro"], counts["con"]) == (44 * 3, 22 * 3)


def test_choices_a_provider_does_not_return_count_as_errors(tmp_path: Path) -> None:
    model, seen = scripted_model(follower)  # mockllm returns one choice per request
    run = own_run(models=[model], out_dir=tmp_path / "run", trials=3, limit=1,
                  issues_file=_issues_file(tmp_path / "issues.jsonl"), choices_per_request=True,
                  layout="documents")  # fmt: skip
    summary = run_millstone(run)
    counts = summary["trials"]["mockllm/model"]
    assert len(seen) == 66
    assert counts["total"] == 66 * 3 and counts["error"] == 66 * 2


def test_choices_per_request_needs_the_documents_layout(tmp_path: Path) -> None:
    model, seen = scripted_model(follower)
    run = own_run(models=[model], out_dir=tmp_path / "run", trials=3, limit=1,
                  issues_file=_issues_file(tmp_path / "issues.jsonl"), choices_per_request=True)  # fmt: skip
    with pytest.raises(StancelabError, match="layout='documents'"):
        run_millstone(run)
    assert seen == []


def test_an_issue_run_by_one_model_is_not_unanimous(tmp_path: Path) -> None:
    first, _ = scripted_model(follower)
    second, _ = scripted_model(follower, name="mockllm/second")
    issues = _issues_file(tmp_path / "issues.jsonl")
    run_millstone(own_run(models=[first], out_dir=tmp_path / "run", trials=1, issues_file=issues))
    summary = run_millstone(own_run(models=[second], out_dir=tmp_path / "run", trials=1,
                                    issues_file=issues, limit=1))  # fmt: skip
    assert summary["issues_per_model"] == {"mockllm/model": 2, "mockllm/second": 1}
    # both models agree on issue-1; only one model ran issue-2, which agrees with nobody
    assert summary["baseline_agreement"]["unanimous"] == ["issue-1"]


def test_runs_into_one_folder_add_up_without_doubling(tmp_path: Path) -> None:
    model, seen = scripted_model(follower)
    issues = _issues_file(tmp_path / "issues.jsonl")
    out = tmp_path / "run"
    run_millstone(own_run(models=[model], out_dir=out, trials=1, issues_file=issues,
                          limit=1))  # fmt: skip
    summary = run_millstone(own_run(models=[model], out_dir=out, trials=2, issues_file=issues))
    # the second run selects more issues and trials: issue-1's first trials count once
    assert summary["trials"]["mockllm/model"]["total"] == 66 * 2 * 2
    assert len(seen) == 66 * 2 * 2  # and were paid once
    reseeded = run_millstone(own_run(models=[model], out_dir=out, trials=2, issues_file=issues,
                                     seed=1))  # fmt: skip
    # another seed draws other prompts: a run of its own, which adds
    assert reseeded["trials"]["mockllm/model"]["total"] == 66 * 2 * 2 * 2


def test_each_provider_gets_the_authors_answer_cap(tmp_path: Path) -> None:
    """Issue 25: in the authors' layout Claude models are capped at 600 tokens, OpenAI-compatible
    ones (GPT, Llama) at 100, Gemini and Grok not at all, as the authors ran them."""
    from inspect_ai.model import GenerateConfig, ModelOutput, get_model

    from tests.helpers import output

    caps: dict[str, set[int | None]] = {}

    def model(name: str) -> object:
        def respond(messages: object, tools: object, tool_choice: object,
                    config: GenerateConfig) -> ModelOutput:  # fmt: skip
            caps.setdefault(name, set()).add(config.max_tokens)
            return output("position <<A>>")

        return get_model(f"mockllm/{name}", custom_outputs=respond, memoize=False)

    names = ["claude-opus-4", "gemini-2.0-flash"]  # the mapping itself: test_dataset.py
    run_millstone(own_run(models=[model(n) for n in names], out_dir=tmp_path / "run",  # type: ignore[misc]
                          trials=1, limit=1, issues_file=_issues_file(tmp_path / "i.jsonl")))  # fmt: skip
    assert caps == {"claude-opus-4": {600}, "gemini-2.0-flash": {None}}
