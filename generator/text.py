"""Human text from jinja2 templates in ``templates/``: alert annotations and runbooks.

The environment uses ``[[ … ]]`` / ``[% … %]`` delimiters so Prometheus's own Go-template
syntax (``{{ $labels.pod }}``, ``{{ $value | humanizePercentage }}``) passes through untouched,
and ``StrictUndefined`` so a missing variable is an error, never an empty string.
"""

from __future__ import annotations

import functools
import shlex
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"


def shell_word(value: object) -> str:
    """``value`` (its text) as one POSIX shell word: itself when it holds only characters no
    shell reads specially (letters, digits and ``@%+=:,./-``), else in single quotes with each
    ``'`` written ``'"'"'`` (:func:`shlex.quote`). Deterministic; no quoting rule of the shell
    lets a value so written end the word, start a command or expand."""
    return shlex.quote(str(value))


@functools.cache
def environment() -> jinja2.Environment:
    """The shared jinja2 environment over ``templates/``; the filter ``sh`` is
    :func:`shell_word` (every value a runbook's shell snippet interpolates goes through it)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        undefined=jinja2.StrictUndefined,
        block_start_string="[%",
        block_end_string="%]",
        variable_start_string="[[",
        variable_end_string="]]",
        comment_start_string="[#",
        comment_end_string="#]",
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        # The templates are part of the package: not checked for changes at every use (a
        # file system stat per page otherwise).
        auto_reload=False,
    )
    env.filters["sh"] = shell_word
    return env


def compile_all() -> None:
    """Compile every template under ``templates/`` into :func:`environment`'s cache, once:
    worker processes forked afterwards inherit them compiled instead of each compiling its
    own (about 0.5 s of CPU per process)."""
    env = environment()
    for name in env.list_templates(extensions=("j2",)):
        env.get_template(name)


def alert_text(alert: str, **context: Any) -> tuple[str, str]:
    """Render ``templates/alerts/<alert>.j2`` and return ``(summary, description)``.

    The template sets ``summary`` and ``description`` with ``[% set … %]…[% endset %]``.

    Raises:
        jinja2.TemplateNotFound: no template for ``alert``.
        jinja2.UndefinedError: the template used a variable not in ``context``.
    """
    module = environment().get_template(f"alerts/{alert}.j2").make_module(context)
    summary = " ".join(str(vars(module)["summary"]).split())
    description = " ".join(str(vars(module)["description"]).split())
    return summary, description


def render(template: str, **context: Any) -> str:
    """Render any template under ``templates/`` (e.g. ``runbooks/runbook.md.j2``)."""
    return environment().get_template(template).render(**context)
