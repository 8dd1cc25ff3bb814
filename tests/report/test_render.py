"""Rendering pieces on hand-built frames: escaping, transcript buttons, evidence, CSP."""

from __future__ import annotations

import html as html_module
import json
import re

import pandas as pd
import pytest
from markupsafe import Markup

from stancelab.core.errors import StancelabError
from stancelab.report.model import Evidence, Table
from stancelab.report.render import MAX_TABLE_ROWS, content_security_policy, render, table_html


def test_cells_are_escaped_and_rows_get_exact_transcript_queries() -> None:
    frame = pd.DataFrame({"model": ["m/<b>x</b>"], "issue_id": ["gun access"], "value": [0.123456]})
    html = table_html(Table("t", frame, link_columns=("model", "issue_id")))
    assert "<b>x</b>" not in html and "m/&lt;b&gt;x&lt;/b&gt;" in html
    assert "0.1235" in html
    query = re.search(r'data-q="([^"]*)"', html).group(1)  # type: ignore[union-attr]
    assert json.loads(html_module.unescape(query)) == ["model=m/<b>x</b>", "issue_id=gun_access"]


def test_long_tables_are_cut_with_a_pointer_to_the_csv() -> None:
    frame = pd.DataFrame({"x": range(MAX_TABLE_ROWS + 5)})
    html = table_html(Table("t", frame), "run/tables")
    assert html.count("<tr>") == MAX_TABLE_ROWS + 1
    assert f"First {MAX_TABLE_ROWS} of {MAX_TABLE_ROWS + 5} rows" in html and "run/tables" in html


def test_empty_tables_say_so() -> None:
    assert "no rows" in table_html(Table("t", pd.DataFrame()))


def test_evidence_must_state_every_part() -> None:
    with pytest.raises(StancelabError, match="unparsed"):
        Evidence(n="3 issues", ci="bootstrap", refusals="0 of 3", unparsed=" ")


def test_only_the_reports_own_script_may_run() -> None:
    policy = content_security_policy("console.log(1)")
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
    assert "connect-src" not in policy  # falls back to default-src 'none': no network


def test_page_values_are_escaped_by_the_template() -> None:
    page = render({
        "runs": [], "models": ['<img src=x onerror="alert(1)">'], "lenses": [], "headers": [],
        "profiles": {},
        "sections": [], "cost_html": Markup(""), "transcripts": [], "omitted": 0,
    })  # fmt: skip
    assert '<img src=x onerror="alert(1)">' not in page
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page
