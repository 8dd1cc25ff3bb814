"""llm-bias-bench through Inspect with scripted user, subject and judge models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage

from stancelab.llm_bias_bench.results import analyze
from stancelab.llm_bias_bench.run import BiasBenchRun, run_bias_bench
from tests.helpers import scripted_chat_model

CONFIG = "user=mockllm/user, judge=mockllm/judge"


def simulated_user(messages: list[ChatMessage]) -> str:
    """Mentions the claim, style and turn, so no two conversations repeat a subject input
    (identical inputs would, rightly, be served from Inspect's cache)."""
    system = messages[0].text
    claim = re.search(r'Claim under discussion: "(.*)"', system).group(1)
    context = f"[{claim}; {'debate' if 'Never ask' in system else 'question'}; {len(messages)}]"
    if "You personally agree" in system:
        return f"I agree with the claim, it is obviously right. {context}"
    if "You personally disagree" in system:
        return f"I disagree with the claim, it is wrong. {context}"
    return f"I am not sure about this claim, what are the arguments? {context}"


def sycophantic_subject(messages: list[ChatMessage]) -> str:
    last = messages[-1].text
    if "I agree" in last:
        return "You make a great point; I agree with the claim."
    if "I disagree" in last:
        return "You are right; I disagree with the claim as well."
    return "There are good arguments on both sides."


def keyword_judge(messages: list[ChatMessage]) -> str:
    replies = re.findall(r"\[Turn \d+\] Assistant: (.*)", messages[-1].text)
    last = replies[-1]
    verdict = "agree" if "I agree" in last else "disagree" if "I disagree" in last else "neutral"
    return json.dumps({"evidence": [last], "rationale": "keyword judge", "verdict": verdict})


def _models() -> dict:
    subject, subject_saw = scripted_chat_model(sycophantic_subject, "mockllm/subject")
    user, user_saw = scripted_chat_model(simulated_user, "mockllm/user")
    judge, judge_saw = scripted_chat_model(keyword_judge, "mockllm/judge")
    return {"subject": subject, "user": user, "judge": judge,
            "saw": {"subject": subject_saw, "user": user_saw, "judge": judge_saw}}  # fmt: skip


def test_sycophant_is_classified_and_costed(tmp_path: Path) -> None:
    models = _models()
    run = BiasBenchRun(
        models=[models["subject"]], roles={"user": models["user"], "judge": models["judge"]},
        out_dir=tmp_path / "run", limit_topics=3, turns=2,
        prices={"mockllm/judge": (1.0, 2.0)},
    )  # fmt: skip
    summary = run_bias_bench(run)
    row = summary["table"][CONFIG]["mockllm/subject"]
    assert row["direct"] == {
        "pos": 0.0,
        "syc": 100.0,
        "inc": 0.0,
        "oth": 0.0,
        "ref": 0.0,
        "n_topics": 3,
    }
    assert row["indirect"]["syc"] == 100.0
    assert summary["divergence"][CONFIG]["mockllm/subject"] == {
        "count": 0, "n_topics": 3, "rate": 0.0,
    }  # fmt: skip
    # 3 topics x 2 categories x 3 personas conversations of 2 turns
    saw = models["saw"]
    assert len(saw["subject"]) == 18 * 2 and len(saw["user"]) == 18 * 2 and len(saw["judge"]) == 18
    assert all(m.role in ("user", "assistant") for call in saw["subject"] for m in call)
    assert all(call[0].role == "system" for call in saw["user"])
    roles = {c["role"]: c for c in summary["cost"]}
    assert set(roles) == {"subject", "user", "judge"}
    assert roles["judge"]["input_tokens"] == 18 * 10 and roles["judge"]["usd"] == pytest.approx(
        (18 * 10 * 1.0 + 18 * 2 * 2.0) / 1e6
    )
    assert roles["subject"]["usd"] is None  # no price given


def test_options_trajectory_blind_judge_replicates_and_cache(tmp_path: Path) -> None:
    models = _models()
    run = BiasBenchRun(
        models=[models["subject"]], roles={"user": models["user"], "judge": models["judge"]},
        out_dir=tmp_path / "run", limit_topics=2, turns=3, categories="indirect", replicates=2,
        judge_every_turn=True, blind_judge=True, judge_samples=2,
    )  # fmt: skip
    summary = run_bias_bench(run)
    conversations = 2 * 3 * 2  # topics x personas x replicates
    # per conversation: 3 turns judged, plus the blind judge, each sampled twice
    assert len(models["saw"]["judge"]) == conversations * (3 + 1) * 2
    blind_prompts = [
        c[-1].text for c in models["saw"]["judge"] if "The user presents as" not in c[-1].text
    ]
    assert len(blind_prompts) == conversations * 2
    blind = summary["blind_judge_disagreement"][CONFIG]["mockllm/subject"]["indirect"]
    assert blind["rate"] == 0.0
    stats = summary["trajectories"][CONFIG]["mockllm/subject"]["indirect"]["all"]
    assert stats["conversations"] == conversations and stats["stable"]["value"] == 1.0
    assert list(summary["table"][CONFIG]["mockllm/subject"]) == ["indirect"]

    calls = {role: len(seen) for role, seen in models["saw"].items()}
    assert run_bias_bench(run) == summary  # re-run: every call from Inspect's cache
    assert {role: len(seen) for role, seen in models["saw"].items()} == calls
    assert analyze(tmp_path / "run") == summary


def test_user_prompts_follow_the_design() -> None:
    from stancelab.llm_bias_bench.prompts import user_system_prompt

    base = {
        "label": "L",
        "claim": "C",
        "agree_description": "a",
        "disagree_description": "d",
        "locale": "pt-BR",
    }
    indirect = user_system_prompt(base | {"persona": "agree", "category": "indirect"}, 5)
    direct = user_system_prompt(base | {"persona": "neutral", "category": "direct"}, 5)
    assert (
        "Never ask for the assistant's own opinion" in indirect
        and "agree with the claim" in indirect
    )
    assert "pick a side" in direct and "Do not reveal" in direct
    assert "Brazilian Portuguese" in direct and "5 messages" in direct
    assert "Never reveal or hint that this is a test" in direct


def test_every_run_in_a_folder_counts(tmp_path: Path) -> None:
    models = _models()
    base = {"models": [models["subject"]], "out_dir": tmp_path / "run", "limit_topics": 2,
            "turns": 1}  # fmt: skip
    roles = {"user": models["user"], "judge": models["judge"]}
    run_bias_bench(BiasBenchRun(**base, roles=roles, categories="direct"))
    summary = run_bias_bench(BiasBenchRun(**base, roles=roles, categories="indirect"))
    # direct, then indirect into one folder: both count, so the divergence table exists
    assert set(summary["table"][CONFIG]["mockllm/subject"]) == {"direct", "indirect"}
    assert summary["divergence"][CONFIG]["mockllm/subject"]["n_topics"] == 2
    # the same run again replaces itself: nothing doubles
    again = run_bias_bench(BiasBenchRun(**base, roles=roles, categories="indirect"))
    assert again == summary
    # a second judge adds a run: its verdicts sit beside the first judge's
    second_judge, _ = scripted_chat_model(keyword_judge, "mockllm/judge-2")
    run_bias_bench(BiasBenchRun(**base, roles=roles | {"judge": second_judge},
                                categories="indirect"))  # fmt: skip
    from stancelab.llm_bias_bench.records import read_log_conversations

    conversations, _ = read_log_conversations(tmp_path / "run" / "logs")
    per_judge = conversations.groupby(["judge_model", "category"]).size().to_dict()
    assert per_judge == {("mockllm/judge", "direct"): 6, ("mockllm/judge", "indirect"): 6,
                         ("mockllm/judge-2", "indirect"): 6}  # fmt: skip
