"""``disable-comment``: a disable comment that names no check, has a bad date, or expired."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from generator.lint import promql as q
from generator.lint.model import Rule, Severity, SourceFile
from generator.lint.registry import Check, Context, Hit

DISABLE_COMMENT = "disable-comment"


def _run(
    sources: Sequence[SourceFile], trees: Mapping[Rule, q.Expr | None], ctx: Context
) -> Iterator[tuple[SourceFile, Rule | None, Hit]]:
    today = ctx.config.day
    for source in sources:
        for rule in source.rules:
            for disable in rule.disables:
                if disable.check != "all" and disable.check not in ctx.check_ids:
                    message = (
                        f"the disable comment names `{disable.check}`, which is no check: "
                        "nothing is switched off (`obsgen lint --list-checks` lists the ids)"
                    )
                elif disable.bad_date:
                    message = (
                        f"`until {disable.bad_date}` is not a date (YYYY-MM-DD): "
                        f"`{disable.check}` stays on"
                    )
                elif disable.until is not None and today > disable.until:
                    message = (
                        f"the disable comment for `{disable.check}` expired on "
                        f"{disable.until.isoformat()}: the check runs again; fix the rule, or "
                        "extend the date if the exception still holds"
                    )
                else:
                    continue
                yield source, rule, Hit(message, line=disable.line)


CHECK = Check(
    DISABLE_COMMENT,
    Severity.WARNING,
    "input",
    "a `# obsgen lint disable` comment naming no check, with a bad date, or expired",
    set_func=_run,
)
