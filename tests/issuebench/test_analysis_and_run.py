"""IssueBench analyses on hand-built distributions, and runs through Inspect with mockllm."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai.model import ChatMessage

from stancelab.issuebench import analysis as an
from stancelab.issuebench.results import analyze
from stancelab.issuebench.run import IssueBenchRun, run_issuebench, validate_classifier
from tests.helpers import scripted_chat_model

# stancelab's bundled issues and templates (`--prompts stancelab`): these tests are about the
# run, not the prompts; test_authors_prompts.py runs the authors' published files.
own_run = partial(IssueBenchRun, prompts="stancelab")


LABELS = ["1", "2", "3", "4", "5", "refusal"]


def _dist(model: str, issue: str, framing: str, shares: list[float]) -> dict:
    return {
        "model": model,
        "issue_id": issue,
        "framing": framing,
        **dict(zip(LABELS, shares, strict=True)),
    }


def test_strict_majority_and_hedging() -> None:
    dists = pd.DataFrame([
        _dist("m", "a", "neutral", [0.6, 0.2, 0.2, 0, 0, 0]),
        _dist("m", "b", "neutral", [0.5, 0.5, 0, 0, 0, 0]),  # exactly 50%: no strict majority
        _dist("m", "a", "pro", [0.1, 0.8, 0.1, 0, 0, 0]),
        _dist("m", "a", "con", [0, 0, 0, 0.9, 0.1, 0]),
    ])  # fmt: skip
    counts = an.majority_counts(dists).set_index("framing")
    assert counts.loc["neutral", ["1", "total", "issues"]].tolist() == [1, 1, 2]
    assert an.majority_counts(dists, strict=False).set_index("framing").loc["neutral", "total"] == 2
    hedged = an.hedging(an.majority_counts(dists)).iloc[0]
    assert hedged["pro_hedged"] == 1 and hedged["con_hedged"] == 1


def test_jensen_shannon_natural_log() -> None:
    assert an.jensen_shannon(np.array([1, 0]), np.array([0, 1])) == pytest.approx(math.log(2))
    assert an.jensen_shannon(np.array([0.5, 0.5]), np.array([0.5, 0.5])) == 0.0
    p, q = np.array([0.7, 0.2, 0.1]), np.array([0.2, 0.5, 0.3])
    m = (p + q) / 2
    expected = 0.5 * np.sum(p * np.log(p / m)) + 0.5 * np.sum(q * np.log(q / m))
    assert an.jensen_shannon(p, q) == pytest.approx(expected)


def test_pairwise_jsd_and_partisan_distance() -> None:
    dists = pd.DataFrame([
        _dist("a", "i1", "neutral", [0.5, 0.5, 0, 0, 0, 0]),
        _dist("b", "i1", "neutral", [0, 0, 0, 0.5, 0.5, 0]),
        _dist("a", "i2", "neutral", [0, 0, 1, 0, 0, 0]),
        _dist("b", "i2", "neutral", [0, 0, 1, 0, 0, 0]),
    ])  # fmt: skip
    pairs = an.pairwise_jsd(dists)
    assert pairs.set_index("issue_id")["jsd"].tolist() == [pytest.approx(math.log(2)), 0.0]
    assert an.model_pair_jsd(pairs).iloc[0]["value"] == pytest.approx(math.log(2) / 2)
    voters = pd.DataFrame([{"issue_id": "i1", "dem": 0.5, "rep": -0.5, "all": 0.0}])
    per_issue, per_model = an.partisan_distances(dists, voters)
    assert per_issue.set_index("model")["position"].to_dict() == {"a": 1.0, "b": -1.0}
    assert per_model.set_index("model").loc["a", ["dem", "rep", "all"]].tolist() == [0.5, 1.5, 1.0]


def test_framing_correlations() -> None:
    rows = []
    for k, x in enumerate([0.1, 0.4, 0.7, 0.9]):
        rows.append(_dist("m", f"i{k}", "neutral", [x, 1 - x, 0, 0, 0, 0]))
        rows.append(_dist("m", f"i{k}", "pro", [x / 2 + 0.5, 0.5 - x / 2, 0, 0, 0, 0]))
    table = an.framing_correlations(pd.DataFrame(rows)).set_index(
        ["framing_b", "label_a", "label_b"]
    )
    assert table.loc[("pro", "1", "1"), "pearson_r"] == pytest.approx(1.0)
    assert table.loc[("pro", "1", "2"), "pearson_r"] == pytest.approx(-1.0)


def _pro_writer(messages: list[ChatMessage]) -> str:
    return f"An enthusiastic text in favour, as asked: {messages[-1].text}"


def _classifier(messages: list[ChatMessage]) -> str:
    prompt = messages[-1].text
    if (
        "which was asked to write about" in prompt
        and "being a bad" in prompt.split("TASK:")[1].split(". Your task")[0]
    ):
        return "4"
    return "1" if "in favour" in prompt else "I cannot decide"


def test_run_with_shards_resume_and_unparsed(tmp_path: Path) -> None:
    subject, written = scripted_chat_model(_pro_writer, "mockllm/writer")
    classifier, asked = scripted_chat_model(_classifier, "mockllm/classifier")
    voters = tmp_path / "voters.csv"
    voters.write_text(
        "topic_id,total_pro,total_con,dem_pro,dem_con,rep_pro,rep_con\nnuclear-energy,0.6,0.4,0.5,0.5,0.8,0.2\n"
    )
    run = own_run(models=[subject], roles={"classifier": classifier}, out_dir=tmp_path / "run",
                  limit=2, n_templates=4, shard_size=10, voters_file=voters)  # fmt: skip
    summary = run_issuebench(run)
    assert len(written) == 2 * 3 * 4 and len(asked) == 24
    assert len(list((tmp_path / "run" / "logs").glob("*.eval"))) == 3  # 24 prompts in shards of 10
    counts = summary["majority_counts"]["mockllm/writer"]
    assert counts["neutral"]["1"] == 2 and counts["pro"]["1"] == 2
    assert summary["responses"]["mockllm/writer"]["total"] == 24
    assert summary["partisan"]["mockllm/writer"]["dem"]["value"] == pytest.approx(1.0)  # 1.0 vs 0.0

    assert run_issuebench(run) == summary  # finished shards are skipped
    assert len(written) == 24 and len(list((tmp_path / "run" / "logs").glob("*.eval"))) == 3
    assert analyze(tmp_path / "run") == summary


def test_validate_classifier_on_gold_rows(tmp_path: Path) -> None:
    gold = tmp_path / "gold.csv"
    header = "topic_polarity,topic_neutral,topic_pro,topic_con,response_text,final_label\n"
    rows = ['pro,cats,cats being good,cats being bad,"Cats are great, in favour.",1 - only pro',
            'neutral,cats,cats being good,cats being bad,"Cats exist.",3 - neutral/ambivalent']  # fmt: skip
    gold.write_text(header + "\n".join(rows) + "\n")
    classifier, _ = scripted_chat_model(_classifier, "mockllm/classifier")
    report = validate_classifier(gold, classifier, tmp_path / "val")
    assert report["n"] == 2 and report["unparsed"] == 1
    assert report["confusion"].loc["1", "1"] == 1 and report["confusion"].loc["3", "unparsed"] == 1
    saved = json.loads((tmp_path / "val" / "classifier_validation.json").read_text())
    assert saved["macro_f1"] == pytest.approx(report["macro_f1"])


def _labeller(label: str) -> Callable[[list[ChatMessage]], str]:
    return lambda messages: label


def test_another_classifier_into_the_same_folder_labels_afresh(tmp_path: Path) -> None:
    subject, written = scripted_chat_model(_pro_writer, "mockllm/writer")
    first, first_asked = scripted_chat_model(_labeller("1"), "mockllm/classifier-a")
    second, second_asked = scripted_chat_model(_labeller("5"), "mockllm/classifier-b")
    options = {"models": [subject], "out_dir": tmp_path / "run", "limit": 1, "n_templates": 2}
    summary = run_issuebench(own_run(roles={"classifier": first}, **options))
    assert (
        len(first_asked) == 6 and summary["majority_counts"]["mockllm/writer"]["neutral"]["1"] == 1
    )

    summary = run_issuebench(own_run(roles={"classifier": second}, **options))
    assert len(second_asked) == 6  # the old labels came from another classifier
    assert len(written) == 6  # the subject's answers come from the cache
    assert summary["responses"]["mockllm/writer"]["5"] == 6
    assert summary["responses"]["mockllm/writer"]["1"] == 0  # no stale label is counted
    # the folder's analysis counts every run: the two classifiers' labels sit side by side
    folder = analyze(tmp_path / "run")
    by_classifier = {
        model.split("classifier=")[-1]: counts for model, counts in folder["responses"].items()
    }
    assert set(by_classifier) == {"mockllm/classifier-a", "mockllm/classifier-b"}
    assert (
        by_classifier["mockllm/classifier-a"]["1"],
        by_classifier["mockllm/classifier-b"]["5"],
    ) == (6, 6)

    summary = run_issuebench(own_run(roles={"classifier": first}, **options))
    assert len(first_asked) == 6  # that run's shards are finished: nothing is called again
    assert summary["responses"]["mockllm/writer"]["1"] == 6


def test_analysis_reads_only_the_current_selection(tmp_path: Path) -> None:
    subject, _ = scripted_chat_model(_pro_writer, "mockllm/writer")
    classifier, _ = scripted_chat_model(_labeller("3"), "mockllm/classifier")
    options = {
        "models": [subject],
        "roles": {"classifier": classifier},
        "out_dir": tmp_path / "run",
    }
    run_issuebench(own_run(limit=2, n_templates=3, **options))
    summary = run_issuebench(own_run(limit=1, n_templates=2, **options))
    assert summary["responses"]["mockllm/writer"]["total"] == 1 * 3 * 2
    assert summary["issues"] == 1
    # the folder's analysis pools runs that differ only in their selection, each prompt once
    folder = analyze(tmp_path / "run")
    assert list(folder["responses"]) == ["mockllm/writer"] and folder["issues"] == 2


def test_paper_protocol_pools_five_calls_at_temperature_one(tmp_path: Path) -> None:
    subject, written = scripted_chat_model(_pro_writer, "mockllm/writer")
    labels = iter(["1", "2", "1", "1", "3"] * 100)
    classifier, asked = scripted_chat_model(lambda m: next(labels), "mockllm/classifier")
    run = own_run(models=[subject], roles={"classifier": classifier}, out_dir=tmp_path / "run",
                  limit=1, n_templates=2, framings="neutral", protocol="paper")  # fmt: skip
    assert run.task_args(0)["temperature"] == 1.0 and run.task_args(0)["calls"] == 5
    assert own_run(models=[subject], out_dir=tmp_path).task_args(0)["calls"] == 1
    greedy = own_run(models=[subject], out_dir=tmp_path, protocol="paper", temperature=0.0)
    assert greedy.task_args(0)["temperature"] == 0.0  # an explicit option wins over the protocol
    summary = run_issuebench(run)
    assert len(written) == 2 * 5 and len(asked) == 2 * 5  # 2 prompts x 5 calls
    responses = summary["responses"]["mockllm/writer"]
    assert responses["total"] == 10 and responses["1"] == 6  # every call counts (pooled)


def test_classifier_gets_template_5_at_temperature_one_and_64_tokens(tmp_path: Path) -> None:
    from inspect_ai.model import GenerateConfig, ModelOutput, get_model

    from tests.helpers import output

    seen: list[tuple[str, GenerateConfig]] = []

    def respond(
        messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
    ) -> ModelOutput:
        seen.append((messages[-1].text, config))
        return output("2")

    classifier = get_model("mockllm/classifier", custom_outputs=respond, memoize=False)
    subject, _ = scripted_chat_model(_pro_writer, "mockllm/writer")
    run_issuebench(own_run(models=[subject], roles={"classifier": classifier},
                           out_dir=tmp_path / "run", limit=1, n_templates=1))  # fmt: skip
    assert len(seen) == 3
    prompt, config = seen[0]
    assert prompt.startswith('### TEXT:\n"An enthusiastic text in favour') and prompt.endswith(
        "### ANSWER:"
    )
    assert (config.temperature, config.max_tokens) == (1.0, 64)


def _responses(labels_by_call: dict[int, list[str]]) -> pd.DataFrame:
    rows = [{"model": "m", "issue_id": "i", "issue": "i", "framing": "neutral", "template_id": f"t{k}",
             "call": call, "label": label}
            for call, labels in labels_by_call.items() for k, label in enumerate(labels)]  # fmt: skip
    return pd.DataFrame(rows)


def test_template_and_call_downsampling() -> None:
    assert an.template_grid(1000) == ([50, 100, 250, 500, 750], True)
    assert an.template_grid(8) == ([2, 4], False)
    uniform = _responses({1: ["1"] * 8})
    curve = an.downsampling_curve(uniform, [2, 4])
    assert curve["mean_jsd"].tolist() == [0.0, 0.0] and curve["seeds"].tolist() == [100, 100]
    mixed = an.downsampling_curve(_responses({1: ["1", "5"] * 4}), [2, 4])
    assert (mixed["mean_jsd"] > 0).all() and mixed.iloc[0]["mean_jsd"] > mixed.iloc[1]["mean_jsd"]

    calls = an.call_downsampling(_responses({1: ["1"] * 4 + ["3"] * 4, 2: ["1"] * 8}))
    by_call = calls.set_index("call")["mean_jsd"]
    full = np.array([12, 0, 4, 0, 0, 0]) / 16
    assert by_call["2"] == pytest.approx(an.jensen_shannon(np.array([1, 0, 0, 0, 0, 0]), full))
    assert by_call["majority"] == pytest.approx(by_call["2"])  # ties go to the first label, "1"


def test_plurality_thresholds_and_distortion() -> None:
    dists = pd.DataFrame([
        _dist("m", "a", "neutral", [0.3, 0.3, 0.4, 0, 0, 0]),  # plurality 0.4; collapsed pro 0.6
        _dist("m", "b", "neutral", [0, 0, 0, 0.1, 0.85, 0.05]),
        _dist("m", "a", "pro", [0.1, 0.8, 0.1, 0, 0, 0]),  # hedged, complied
        _dist("m", "b", "pro", [0, 0, 0, 0.7, 0.3, 0]),  # opposite side
    ])  # fmt: skip
    plurality = an.plurality_shares(dists).set_index(["issue_id", "framing"])
    assert plurality.loc[("a", "neutral"), ["max_value", "max_label"]].tolist() == [0.4, "3"]
    assert plurality.loc[
        ("a", "neutral"), ["max_collapsed_value", "max_collapsed_label"]
    ].tolist() == [0.6, "pro"]
    robust = an.threshold_robustness(plurality.reset_index())
    neutral = robust[(robust["framing"] == "neutral")].set_index(["labels", "threshold"])[
        "issues_above"
    ]
    assert (
        neutral[("six", 0.5)] == 1
        and neutral[("collapsed", 0.5)] == 2
        and neutral[("six", 0.9)] == 0
    )
    distortion = an.distortion_rates(dists).set_index("framing").loc["pro"]
    assert distortion[["complied", "hedged", "opposite"]].tolist() == [1, 1, 1]
    assert distortion["distortion_rate"] == 0.5


def test_an_issue_with_no_readable_label_has_no_plurality_or_majority() -> None:
    dists = pd.DataFrame(
        [_dist("m", "a", "neutral", [np.nan] * 6), _dist("m", "b", "neutral", [1, 0, 0, 0, 0, 0])]
    )
    plurality = an.plurality_shares(dists)
    assert plurality["max_label"].isna().tolist() == [True, False]
    assert an.majority_labels(dists).tolist()[1] == "1" and pd.isna(
        an.majority_labels(dists).tolist()[0]
    )


def test_estimate_counts_every_call_of_the_paper_protocol(tmp_path: Path) -> None:
    from stancelab.issuebench.estimate import plan

    options = {"models": ["mockllm/model"], "out_dir": tmp_path, "limit": 2, "n_templates": 4}
    one, five = plan(own_run(**options)), plan(own_run(calls=5, **options))
    assert [p.calls_min for p in one] == [24, 24] and [p.calls_min for p in five] == [120, 120]
    assert five[0].input_tokens == 5 * one[0].input_tokens
    assert [p.calls_min for p in plan(own_run(protocol="paper", **options))] == [120, 120]
