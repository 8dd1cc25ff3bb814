"""llm-bias-bench through Inspect with scripted user, subject and judge models. The scripted
models read stancelab's own wording, so these runs use it (`--prompts stancelab`); the authors'
prompts are tested against their runner in `test_authors_method.py`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, get_model

from stancelab.llm_bias_bench.results import analyze
from stancelab.llm_bias_bench.run import BiasBenchRun, run_bias_bench
from tests.helpers import ChatReply, output, scripted_chat_model

CONFIG = "user=mockllm/user, judge=mockllm/judge"
OWN_WORDING = "stancelab"  # the scripted models read stancelab's wording


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
        prompts=OWN_WORDING, models=[models["subject"]], roles={"user": models["user"], "judge": models["judge"]},
        out_dir=tmp_path / "run", limit=3, turns=2,
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
        "not_measured": None,
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
        prompts=OWN_WORDING, models=[models["subject"]], roles={"user": models["user"], "judge": models["judge"]},
        out_dir=tmp_path / "run", limit=2, turns=3, categories="indirect", replicates=2,
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
    base = {"prompts": OWN_WORDING, "models": [models["subject"]], "out_dir": tmp_path / "run", "limit": 2,
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

    conversations, _, _ = read_log_conversations(tmp_path / "run" / "logs")
    per_judge = conversations.groupby(["judge_model", "category"]).size().to_dict()
    assert per_judge == {("mockllm/judge", "direct"): 6, ("mockllm/judge", "indirect"): 6,
                         ("mockllm/judge-2", "indirect"): 6}  # fmt: skip


Calls = list[tuple[list[ChatMessage], float | None]]


def _recording(reply: ChatReply, name: str) -> tuple[Model, Calls]:
    """A mockllm model answering `reply(messages)` that records (messages, temperature)."""
    calls: Calls = []

    def respond(messages: list[ChatMessage], tools: object, tool_choice: object,
                config: GenerateConfig) -> ModelOutput:  # fmt: skip
        calls.append((list(messages), config.temperature))
        return output(reply(messages))

    return get_model(name, custom_outputs=respond, memoize=False), calls


def test_protocol_turn_counter_temperatures_and_condition(tmp_path: Path) -> None:
    subject, subject_calls = _recording(sycophantic_subject, "mockllm/subject")
    user, user_calls = _recording(simulated_user, "mockllm/user")
    judge, judge_calls = _recording(keyword_judge, "mockllm/judge")
    run = BiasBenchRun(prompts=OWN_WORDING, models=[subject], roles={"user": user, "judge": judge},
                       out_dir=tmp_path / "run", limit=1, turns=3)  # fmt: skip
    run_bias_bench(run)
    # the simulated user knows it takes part in an evaluation, and counts the turns
    system = user_calls[0][0][0].text
    assert "evaluation of AI assistants" in system and "Never reveal" in system
    assert len(user_calls) == 6 * 3  # (conversations interleave: read the turn off the history)
    assert all(f"Turn {len(call[0]) // 2} of 3" in call[0][-1].text for call in user_calls)
    later = [call[0] for call in user_calls if len(call[0]) > 2]
    assert len(later) == 6 * 2
    assert all(m[-1].text.startswith("The assistant's reply:") and m[-2].role == "assistant"
               for m in later)  # fmt: skip
    # temperatures as the authors ran them: user 0.8, subject 0.7, judge 0
    assert {t for _, t in user_calls} == {0.8}
    assert {t for _, t in subject_calls} == {0.7}
    assert {t for _, t in judge_calls} == {0.0}
    # the judge sees the condition and answers evidence, then rationale, then verdict
    prompt = judge_calls[0][0][-1].text
    assert "Probing style:" in prompt and "The user presents as" in prompt
    assert "first collect the evidence, then write the rationale" in prompt
    # the authors' refusal: "I'm an AI, I have no opinion", generic evasion, too short to judge
    refusal = next(line for line in prompt.splitlines() if line.startswith("- refusal:"))
    assert (
        "as an AI, it has no opinion" in refusal
        and "generic reply that avoids the subject" in refusal
    )
    assert "too short or empty" in refusal
    assert prompt.index('"evidence"') < prompt.index('"rationale"') < prompt.index('"verdict"')


@pytest.mark.parametrize(("reading", "label"), [("authors", "missing"), ("lenient", "unparsed")])
def test_the_later_runner_asks_an_unreadable_judge_again_fresh_five_times(
    tmp_path: Path, reading: str, label: str
) -> None:
    """As the authors' runner at eff42a4 judges; the paper's (c3c7336) asks once."""
    asked: dict[str, int] = {}

    def flaky_judge(messages: list[ChatMessage]) -> str:
        """Unreadable twice per conversation, then readable; never for the disagree persona."""
        prompt = messages[-1].text
        asked[prompt] = asked.get(prompt, 0) + 1
        if "presents as disagreeing" in prompt or asked[prompt] <= 2:
            return "I cannot decide."
        return keyword_judge(messages)

    models = _models()
    judge, judge_saw = scripted_chat_model(flaky_judge, "mockllm/flaky-judge")
    run = BiasBenchRun(prompts=OWN_WORDING, models=[models["subject"]], roles={"user": models["user"], "judge": judge},
                       out_dir=tmp_path / "run", limit=1, turns=1,
                       categories="direct", authors_commit="eff42a4", reading=reading)  # fmt: skip
    summary = run_bias_bench(run)
    # neutral and agree personas: 2 re-asks each (fresh requests, not the cached reply);
    # disagree persona: 5 calls in all (the authors' later runner), then missing (their reading:
    # no verdict found) or unparsed (the lenient reading)
    assert len(judge_saw) == 3 + 3 + 5
    config = "user=mockllm/user, judge=mockllm/flaky-judge"
    counts = summary["unparsed"][config]["mockllm/subject"]["direct"]
    assert counts["missing" if label == "missing" else "count"] == 1
    from stancelab.llm_bias_bench.records import read_log_conversations

    conversations, _, _ = read_log_conversations(tmp_path / "run" / "logs")
    attempts = conversations.set_index("persona")["judge_attempts"].to_dict()
    assert attempts == {"neutral": 3, "agree": 3, "disagree": 5}
    assert run_bias_bench(run) == summary and len(judge_saw) == 11  # a re-run replays the cache


def test_the_papers_runner_asks_the_judge_once(tmp_path: Path) -> None:
    models = _models()
    judge, judge_saw = scripted_chat_model(lambda messages: "I cannot decide.", "mockllm/mute")
    run = BiasBenchRun(prompts=OWN_WORDING, models=[models["subject"]],
                       roles={"user": models["user"], "judge": judge}, out_dir=tmp_path / "run",
                       limit=1, turns=1, categories="direct")  # fmt: skip
    summary = run_bias_bench(run)
    assert len(judge_saw) == 3  # one call per verdict (c3c7336), each then missing
    counts = summary["unparsed"]["user=mockllm/user, judge=mockllm/mute"]["mockllm/subject"][
        "direct"
    ]
    assert counts == {"count": 0, "missing": 3, "conversations": 3}


def test_the_judge_has_its_own_token_cap_not_max_tokens(tmp_path: Path) -> None:
    caps: dict[str, list[int | None]] = {"subject": [], "judge": []}

    def recording(role: str, reply: ChatReply, name: str) -> Model:
        def respond(messages: list[ChatMessage], tools: object, tool_choice: object,
                    config: GenerateConfig) -> ModelOutput:  # fmt: skip
            caps[role].append(config.max_tokens)
            return output(reply(messages))

        return get_model(name, custom_outputs=respond, memoize=False)

    user, _ = scripted_chat_model(simulated_user, "mockllm/user")
    run = BiasBenchRun(prompts=OWN_WORDING, models=[recording("subject", sycophantic_subject, "mockllm/subject")],
                       roles={"user": user, "judge": recording("judge", keyword_judge, "mockllm/judge")},
                       out_dir=tmp_path / "run", limit=1, turns=1, categories="direct", max_tokens=8)  # fmt: skip
    run_bias_bench(run)
    assert set(caps["subject"]) == {8}
    assert set(caps["judge"]) == {2048}  # the authors' runner: max_tokens=2048 for the judge


def _two_faced_subject(messages: list[ChatMessage]) -> str:
    """Agrees when asked its opinion; mirrors the user when the user argues."""
    last = messages[-1].text
    if "question" in last and "I am not sure" not in last:
        return f"Since you ask: I agree with the claim. ({len(messages)})"
    return sycophantic_subject(messages)


def test_two_categories_two_judges_two_users_give_every_table(tmp_path: Path) -> None:
    def strict_judge(messages: list[ChatMessage]) -> str:
        """Reads a disagreeing user's conversation as neutral: it differs from the first judge."""
        if "presents as disagreeing" in messages[-1].text:
            return json.dumps({"evidence": [], "rationale": "strict", "verdict": "neutral"})
        return keyword_judge(messages)

    def undecided_user(messages: list[ChatMessage]) -> str:
        return simulated_user(messages).replace("I disagree with the claim, it is wrong.",
                                                "I am not sure, what are the arguments?")  # fmt: skip

    subjects = [scripted_chat_model(_two_faced_subject, f"mockllm/s{i}")[0] for i in range(5)]
    users = [scripted_chat_model(simulated_user, "mockllm/user")[0],
             scripted_chat_model(undecided_user, "mockllm/user-2")[0]]  # fmt: skip
    judges = [scripted_chat_model(keyword_judge, "mockllm/judge")[0],
              scripted_chat_model(strict_judge, "mockllm/judge-2")[0]]  # fmt: skip
    out = tmp_path / "run"
    base = {"prompts": OWN_WORDING, "models": subjects, "out_dir": out, "limit": 2, "turns": 2,
            "replicates": 2, "judge_every_turn": True}  # fmt: skip
    for user, judge in ((users[0], judges[0]), (users[0], judges[1]), (users[1], judges[0])):
        summary = run_bias_bench(BiasBenchRun(**base, roles={"user": user, "judge": judge}))
    configs = {"user=mockllm/user, judge=mockllm/judge", "user=mockllm/user, judge=mockllm/judge-2",
               "user=mockllm/user-2, judge=mockllm/judge"}  # fmt: skip
    assert set(summary["table"]) == set(summary["configs"]) == configs
    for config in configs:  # both categories under every configuration, kept apart
        assert set(summary["table"][config]["mockllm/s0"]) == {"direct", "indirect"}
    first = summary["table"]["user=mockllm/user, judge=mockllm/judge"]["mockllm/s0"]
    assert first["direct"]["pos"] == 100.0 and first["indirect"]["syc"] == 100.0
    strict = summary["table"]["user=mockllm/user, judge=mockllm/judge-2"]["mockllm/s0"]
    assert strict["indirect"]["syc"] == 0.0  # judge 2's verdicts are not pooled with judge 1's
    tables = out / "tables"
    for name in ("table", "classes", "divergence", "divergent_topics", "verdict_rates",
                 "trajectories", "persuasion", "cost", "user_agreement", "user_consensus",
                 "user_overall", "judge_agreement", "judge_consensus", "judge_overall",
                 "run_to_run"):  # fmt: skip
        assert len(pd.read_csv(tables / f"{name}.csv")) > 0, name
    comparisons = summary["comparisons"]
    # Table 6: with five models changing class on both topics, both topics are listed
    assert comparisons["divergent_topics"]["user=mockllm/user, judge=mockllm/judge"]["topics"] == [
        "abortion_legal", "gun_access"]  # fmt: skip
    # Table 8: the two judges read the same conversations; they differ on the disagree persona
    (judges_overall,) = comparisons["judges"]["overall"]
    (pair,) = comparisons["judges"]["pairwise"]
    assert pair["slots"] == 5 * 2 * 2 * 3 * 2  # models x topics x categories x personas x reps
    assert pair["agreement"] == pytest.approx(200 / 3)  # all but the disagree persona
    assert judges_overall["raters"] == 2 and judges_overall["krippendorff_alpha"] < 1
    # Table 7: the undecided second user changes the disagree persona's verdicts
    (users_overall,) = comparisons["user_models"]["overall"]
    assert users_overall["raters"] == 2 and users_overall["unanimous"] == pytest.approx(200 / 3)
    # run-to-run: the scripted runs repeat themselves exactly
    runs = comparisons["run_to_run"]["user=mockllm/user, judge=mockllm/judge"]["mockllm/s0"]
    assert runs["pairs"] == 2 * 2 * 3 and runs["agreement"] == 100.0
    assert "agree" in summary["trajectories"]["user=mockllm/user, judge=mockllm/judge"][
        "mockllm/s0"]["indirect"]  # fmt: skip
    # the printed summary and the report keep the configurations apart too
    from stancelab.llm_bias_bench.results import format_summary
    from stancelab.report.build import build_report

    printed = format_summary(summary)
    assert all(f"[{config}]" in printed for config in configs)
    assert "judge agreement (Table 8): 2 raters, pairwise 66.7-66.7%" in printed
    report = build_report([tmp_path], tmp_path / "report.html")
    rows = {p.model for p in report.profiles if p.model.startswith("mockllm/s0")}
    assert rows == {f"mockllm/s0 · {config}" for config in configs}


def test_conversations_come_from_the_summaries_as_read_from_the_full_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader takes verdicts and transcript ids from the sample summaries (the full
    samples cost most of an analysis); the frame is the one the full samples give."""
    from stancelab.llm_bias_bench import records

    models = _models()
    run = BiasBenchRun(
        prompts=OWN_WORDING, models=[models["subject"]], roles={"user": models["user"], "judge": models["judge"]},
        out_dir=tmp_path / "run", limit=2, turns=2, categories="indirect",
        judge_every_turn=True, blind_judge=True,
    )  # fmt: skip
    run_bias_bench(run)
    logs = tmp_path / "run" / "logs"
    reads: list[list[str]] = []  # the columns of each read; a transcript id needs the messages
    samples_frame = records.samples_frame

    def recording(logs: Path, columns: list) -> pd.DataFrame:
        reads.append([column.name for column in columns])
        return samples_frame(logs, columns)

    monkeypatch.setattr(records, "samples_frame", recording)
    from_summaries, usage, _ = records.read_log_conversations(logs)
    assert reads == [["judge"]]
    monkeypatch.setattr(records, "_summary_whole", lambda judged: False)
    from_samples, full_usage, _ = records.read_log_conversations(logs)
    assert reads[1:] == [["judge"], ["judge", "transcript_id"]]
    pd.testing.assert_frame_equal(from_summaries, from_samples)
    pd.testing.assert_frame_equal(usage, full_usage)
    assert from_summaries["transcript_id"].str.len().eq(16).all()
    assert from_summaries["trajectory"].str.count(r"\|").eq(1).all()


def test_a_summary_missing_or_cut_key_sends_the_reader_to_the_full_samples() -> None:
    from stancelab.llm_bias_bench.records import _summary_whole

    whole = {"verdict": "agree", "transcript_id": "0123456789abcdef", "usage": {}}
    assert _summary_whole(whole)
    assert _summary_whole(whole | {"evidence": "Key removed from summary (> 1k)"})
    assert not _summary_whole({"verdict": "agree", "usage": {}})  # a run before the id
    assert not _summary_whole(whole | {"trajectory": "Key removed from summary (> 1k)"})
    assert not _summary_whole(None)
