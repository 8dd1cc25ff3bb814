"""The fake server's Files and Batches API through OpenAI's own client: upload, create, poll,
download, as a provider's batch runs."""

from __future__ import annotations

import io
import json

from openai import OpenAI

from stancelab.testing.fake_openai import FakeOpenAIServer, default_reply


def test_a_batch_round_trip_answers_each_request_by_its_custom_id() -> None:
    asks = {f"req-{n}": f"question {n}" for n in range(3)}
    lines = [{"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
              "body": {"model": "fake", "messages": [{"role": "user", "content": text}]}}
             for custom_id, text in asks.items()]  # fmt: skip
    payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    with FakeOpenAIServer() as server:
        client = OpenAI(base_url=server.base_url, api_key="local")
        uploaded = client.files.create(file=("batch.jsonl", io.BytesIO(payload)), purpose="batch")
        created = client.batches.create(input_file_id=uploaded.id, completion_window="24h",
                                        endpoint="/v1/chat/completions")  # fmt: skip
        batch = client.batches.retrieve(created.id)
        assert batch.status == "completed" and batch.output_file_id
        assert batch.request_counts is not None and batch.request_counts.completed == 3
        output = [
            json.loads(line)
            for line in client.files.content(batch.output_file_id).text.splitlines()
        ]
        assert server.stats.requests == 0 and server.stats.batched == server.stats.paid_calls == 3
    answers = {line["custom_id"]: line["response"]["body"]["choices"][0]["message"]["content"]
               for line in output}  # fmt: skip
    assert answers == {
        custom_id: default_reply([{"content": text}]) for custom_id, text in asks.items()
    }
