"""IssueBench's resumable pieces (`--shard-size`) with logs on object storage (moto's S3 server
over HTTP): a piece with a finished log at the URL is not run again."""

from __future__ import annotations

from pathlib import Path

from stancelab.core.results.store import list_location
from stancelab.issuebench.run import IssueBenchRun, run_evals
from tests.helpers import scripted_chat_model


def _writer(messages: list) -> str:
    return "Nuclear energy is good, in favour."


def _classifier(messages: list) -> str:
    return "1"


def test_finished_pieces_at_a_url_are_not_run_again(bucket: str, tmp_path: Path) -> None:
    subject, written = scripted_chat_model(_writer, "mockllm/writer")
    classifier, asked = scripted_chat_model(_classifier, "mockllm/classifier")
    url = f"s3://{bucket}/issuebench"
    run = IssueBenchRun(models=[subject], roles={"classifier": classifier}, out_dir=tmp_path / "run",
                        prompts="stancelab", limit=1, n_templates=4, shard_size=5, log_dir=url)  # fmt: skip
    run_evals(run)
    first_logs = set(list_location(url))
    assert len(first_logs) == 3 and len(written) == 12  # 12 prompts in pieces of 5
    classified = len(asked)
    run_evals(run)
    assert len(written) == 12 and len(asked) == classified  # every piece found finished there
    assert set(list_location(url)) == first_logs
