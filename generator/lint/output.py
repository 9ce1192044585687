"""Formatting a :class:`~generator.lint.engine.Report`: ``text``, ``json``, ``github``.

* text: ``file:line: severity: message [check-id] (rule)``, then a summary line;
* json: ``{"findings": [{file, line, check, severity, message, rule}], "summary": {...}}``;
* github: workflow commands (``::error file=…,line=…,title=…::message``), which GitHub Actions
  shows as annotations on the pull request; info findings become ``::notice``.
"""

from __future__ import annotations

import json

from generator.errors import printable
from generator.lint.engine import Report
from generator.lint.model import Finding, Severity

FORMATS = ("text", "json", "github")
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _summary(report: Report) -> dict[str, int]:
    return {
        "files": report.files,
        "rules": report.rules,
        "errors": report.count(Severity.ERROR),
        "warnings": report.count(Severity.WARNING),
        "info": report.count(Severity.INFO),
    }


def _text_line(finding: Finding) -> str:
    # File names, rule names and the expressions quoted in messages come from the linted
    # files: a newline there would start a line of its own (a CI runner reads
    # "::error …::" lines as commands) and an escape would recolour or move the terminal.
    where = f"{finding.file}:{finding.line}" if finding.line else finding.file
    rule = f" ({finding.rule})" if finding.rule else ""
    return printable(
        f"{where}: {finding.severity.value}: {finding.message} [{finding.check}]{rule}"
    )


def format_text(report: Report) -> str:
    """One line per finding and a closing summary."""
    lines = [_text_line(f) for f in report.findings]
    s = _summary(report)
    if report.findings:
        lines.append(
            f"{len(report.findings)} finding(s): {s['errors']} error(s), {s['warnings']} "
            f"warning(s), {s['info']} info, in {s['files']} file(s), {s['rules']} rule(s)"
        )
    else:
        lines.append(f"no findings in {s['files']} file(s), {s['rules']} rule(s)")
    return "\n".join(lines) + "\n"


def format_json(report: Report) -> str:
    """A JSON document with the findings in report order and the counts."""
    document = {
        "findings": [
            {
                "file": f.file,
                "line": f.line,
                "check": f.check,
                "severity": f.severity.value,
                "message": f.message,
                "rule": f.rule,
                **({"fix": f.fix.as_dict()} if f.fix is not None else {}),
            }
            for f in report.findings
        ],
        "summary": _summary(report),
    }
    return json.dumps(document, indent=2) + "\n"


def _escape_data(text: str) -> str:
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(report: Report) -> str:
    """GitHub Actions workflow commands, one per finding."""
    lines = []
    for f in report.findings:
        props = [f"file={_escape_property(f.file)}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={_escape_property('obsgen-lint ' + f.check)}")
        rule = f" ({f.rule})" if f.rule else ""
        lines.append(
            f"::{_GITHUB_LEVEL[f.severity]} {','.join(props)}::{_escape_data(f.message + rule)}"
        )
    return "".join(line + "\n" for line in lines)


def render(report: Report, fmt: str) -> str:
    """Format ``report`` as ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "json":
        return format_json(report)
    if fmt == "github":
        return format_github(report)
    return format_text(report)
