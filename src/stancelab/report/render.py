"""Rendering the report to one self-contained HTML file.

Model text is untrusted: the template engine escapes every value, and a Content Security
Policy allows only the report's own script (by hash), inline styles and data: images, so
nothing from a model can run and the page makes no network request."""

from __future__ import annotations

import base64
import hashlib
import json
import math
from datetime import UTC, datetime
from importlib import resources
from importlib.metadata import version

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from stancelab.report.model import Table
from stancelab.report.transcripts import normalise

MAX_TABLE_ROWS = 200


def _asset(name: str) -> str:
    return resources.files("stancelab.report").joinpath("templates", name).read_text("utf-8")


def content_security_policy(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def _cell(value: object) -> str:
    """A table cell's text: empty where nothing was measured (None, NaN)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def _link_button(row: pd.Series, columns: tuple[str, ...]) -> Markup:
    tokens = [f"{column}={normalise(row[column])}" for column in columns
              if column in row.index and not pd.isna(row[column])]  # fmt: skip
    if not tokens:
        return Markup("")
    query = escape(json.dumps(tokens))
    return Markup(
        f'<button class="show-transcripts" type="button" data-q="{query}">transcripts</button>'
    )


def table_html(table: Table, source: str = "") -> Markup:
    """An escaped HTML table (the first MAX_TABLE_ROWS rows), with transcript buttons."""
    frame = table.frame
    if frame.empty:
        return Markup('<p class="muted">(no rows in this run)</p>')
    links = bool(table.link_columns)
    head = "".join(f"<th>{escape(column)}</th>" for column in frame.columns)
    rows = []
    for _, row in frame.head(MAX_TABLE_ROWS).iterrows():
        cells = "".join(f"<td>{escape(_cell(value))}</td>" for value in row)
        button = f"<td>{_link_button(row, table.link_columns)}</td>" if links else ""
        rows.append(f"<tr>{button}{cells}</tr>")
    more = ""
    if len(frame) > MAX_TABLE_ROWS:
        more = f'<p class="muted">First {MAX_TABLE_ROWS} of {len(frame)} rows; all rows in {escape(source)}.</p>'
    link_head = "<th></th>" if links else ""
    return Markup(
        f'<table class="data"><thead><tr>{link_head}{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{more}"
    )


def render(context: dict[str, object]) -> str:
    """The report page from its parts (see build.py for what `context` holds)."""
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = environment.from_string(_asset("report.html"))
    script = _asset("report.js")
    return template.render(
        **context,
        css=_asset("report.css"),
        script=script,
        csp=content_security_policy(script),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=version("stancelab"),
    )
