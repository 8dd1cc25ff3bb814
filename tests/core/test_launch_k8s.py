"""`stancelab launch k8s`: an Indexed Job that the Kubernetes client's models accept, the
secrets by reference only, and a pod's command run here with `JOB_COMPLETION_INDEX` set."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai.log import read_eval_log

from stancelab.cli import main
from stancelab.core.errors import StancelabError
from stancelab.core.results.logs import SHARD_KEY
from stancelab.core.results.store import list_location, store_filesystem
from stancelab.core.runs.launch.k8s import checked_job
from stancelab.testing.fake_openai import FakeOpenAIServer, verdict_reply
from tests.helpers import summary_figures

RUN = ["llm-bias-bench", "--model", "openai-api/fake/subject", "--limit", "2", "--turns", "1",
       "--display", "none", "--prompts", "stancelab"]  # fmt: skip
FAKE_KEY = "sk-fake-0123456789abcdef"


URL = ["--log-dir", "s3://bucket/run"]


def _manifests(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The shards' Job and the analysis Job that `launch k8s` writes (`extra`: the location)."""
    output = tmp_path / "shards.yaml"
    code = main(["launch", "k8s", *RUN, "--shards", "3", "--image", "ghcr.io/example/stancelab:1",
                 "--secret", "llm-keys", "--secret-env", "FAKE_API_KEY=llm-keys:fake",
                 "--output", str(output), *extra])  # fmt: skip
    assert code == 0
    return (yaml.safe_load(output.read_text()),
            yaml.safe_load((tmp_path / "shards-analyze.yaml").read_text()))  # fmt: skip


def test_the_manifest_is_an_indexed_job_the_client_models_accept(tmp_path: Path) -> None:
    shards, analysis = _manifests(tmp_path, *URL, "--parallelism", "2")
    job = checked_job(shards)
    assert (job.spec.completions, job.spec.parallelism, job.spec.completion_mode) == (
        3,
        2,
        "Indexed",
    )
    (container,) = job.spec.template.spec.containers
    assert container.image == "ghcr.io/example/stancelab:1"
    assert container.command[:6] == [
        "stancelab",
        "launch",
        "task",
        "--index-env",
        "JOB_COMPLETION_INDEX",
        "--shards",
    ]
    assert "--shard" not in container.command  # each pod's shard from its index
    assert [source.secret_ref.name for source in container.env_from] == ["llm-keys"]
    (variable,) = container.env
    assert (variable.name, variable.value, variable.value_from.secret_key_ref.key) == (
        "FAKE_API_KEY",
        None,
        "fake",
    )
    analyze = checked_job(analysis).spec.template.spec.containers[0].command
    assert analyze == [
        "stancelab",
        "analyze",
        "s3://bucket/run",
        "--out",
        "s3://bucket/run-analysis",
    ]
    assert job.spec.template.spec.volumes is None


def test_fields_the_models_do_not_know_or_of_the_wrong_type_are_refused(tmp_path: Path) -> None:
    shards, _ = _manifests(tmp_path, *URL)
    unknown = copy.deepcopy(shards)
    unknown["spec"]["completionsMode"] = "Indexed"
    with pytest.raises(StancelabError, match="does not know"):
        checked_job(unknown)
    wrong = copy.deepcopy(shards)
    wrong["spec"]["completions"] = "three"
    with pytest.raises(ValueError, match="completions"):
        checked_job(wrong)


def test_no_key_value_is_in_a_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    _manifests(tmp_path, *URL)
    texts = [path.read_text() for path in tmp_path.glob("*.yaml")]
    assert len(texts) == 2 and all(FAKE_KEY not in text and "llm-keys" in text for text in texts)


def test_a_pods_command_runs_its_shard_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    shards, analysis = _manifests(
        tmp_path, "--out", str(run), "--volume", f"shared-runs:{tmp_path}"
    )
    pod = checked_job(shards).spec.template.spec
    assert pod.volumes[0].persistent_volume_claim.claim_name == "shared-runs"
    assert pod.containers[0].volume_mounts[0].mount_path == str(tmp_path)
    command = shards["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[0] == "stancelab" and f"--out {run}" in " ".join(command)
    assert analysis["spec"]["template"]["spec"]["containers"][0]["command"][-1] == str(run)
    with FakeOpenAIServer(reply=verdict_reply) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        monkeypatch.setenv("JOB_COMPLETION_INDEX", "2")
        assert main(command[1:]) == 0
    (log,) = (run / "logs").rglob("*.eval")  # the shard's log, in any layout of shards
    assert read_eval_log(str(log), header_only=True).eval.metadata[SHARD_KEY] == "3/3"


def test_k8s_needs_a_log_location_every_pod_reaches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "launch",
            "k8s",
            *RUN,
            "--shards",
            "2",
            "--image",
            "i",
            "--output",
            str(tmp_path / "j.yaml"),
        ]
    )
    assert code == 2 and "--log-dir URL" in capsys.readouterr().err


def test_apply_without_a_kubeconfig_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    code = main(["launch", "k8s", *RUN, "--shards", "2", *URL, "--image", "i", "--apply"])
    err = capsys.readouterr().err
    assert (
        code == 2
        and err.startswith("error: --apply: no usable kubeconfig")
        and err.count("\n") == 1
    )


def test_the_analysis_job_of_a_url_writes_its_summary_beside_the_logs(
    tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"s3://{bucket}/run"
    shards, analysis = _manifests(tmp_path, "--log-dir", url)
    command = shards["spec"]["template"]["spec"]["containers"][0]["command"]
    analyze = analysis["spec"]["template"]["spec"]["containers"][0]["command"]
    monkeypatch.chdir(tmp_path)  # each pod's own folder (lost when it ends)
    with FakeOpenAIServer(reply=verdict_reply) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        for index in range(3):
            monkeypatch.setenv("JOB_COMPLETION_INDEX", str(index))
            assert main(command[1:]) == 0
    assert main(analyze[1:]) == 0
    results = list_location(f"{url}-analysis")
    assert "summary.json" in results and any(name.startswith("tables/") for name in results)
    fs, root = store_filesystem(f"{url}-analysis/summary.json")
    fs.get_file(root, str(tmp_path / "stored.json"))
    pod_folder = tmp_path / "runs" / "store" / "s3" / bucket / "run"
    assert summary_figures(tmp_path / "stored.json") == summary_figures(pod_folder / "summary.json")
    assert not any(name.endswith("summary.json") for name in list_location(url))  # not a log


def test_a_bucket_without_a_prefix_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code = main(["launch", "k8s", *RUN, "--shards", "3", "--image", "ghcr.io/example/stancelab:1",
                 "--output", str(tmp_path / "shards.yaml"), "--log-dir", "s3://bucket"])  # fmt: skip
    assert code == 2 and not (tmp_path / "shards.yaml").exists()
    error = capsys.readouterr().err.strip()
    assert "give the logs a prefix" in error and "\n" not in error
