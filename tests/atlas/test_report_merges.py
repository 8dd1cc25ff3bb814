"""`stancelab report` on the MillStone and IssueBench imports (replay of the released data):
Llama 3.1 8B, spelled "llama-3.1-8b" by MillStone and "Llama-3.1-8B-Instruct" by IssueBench,
is one row with both lenses, and its matrix has both lenses on shared topics."""

from __future__ import annotations

from pathlib import Path

from stancelab.cli import main
from stancelab.report.build import build_report
from tests.shared_data import external


def test_report_on_two_imports_has_one_llama_8b_row(tmp_path: Path) -> None:
    for source, folder in (("millstone", "millstone"), ("issuebench-tables", "issuebench")):
        assert main(["import", source, str(external(folder)), "--out", str(tmp_path / folder)]) == 0
    result = build_report([tmp_path], tmp_path / "report.html")
    llama = {p.probe: p for p in result.profiles if "llama-3.1-8b" in p.model.lower()}
    assert {p.model for p in llama.values()} == {"llama-3.1-8b"}
    assert set(llama) == {"millstone", "issuebench"}
    assert "Llama-3.1-8B-Instruct" not in {p.model for p in result.profiles}
    assert not {p.model for p in result.profiles} & {
        "Llama-3.1-70B-Instruct".lower(),
        "llama-3.1-70b",
    }
    assert result.matrix is not None
    cells = [
        c
        for c in result.matrix["cells"]
        if c["model"] == "llama-3.1-8b" and c["stance"] is not None
    ]
    shared = {c["topic"] for c in cells if c["lens"] == "millstone"} & {
        c["topic"] for c in cells if c["lens"] == "issuebench"
    }
    assert {"gun-control", "abortion", "death-penalty"} <= shared
    page = result.path.read_text(encoding="utf-8")
    assert "merged: llama-3.1-8b (millstone), Llama-3.1-8B-Instruct (issuebench)" in page
