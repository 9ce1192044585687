"""``obsgen lint``: checks for Prometheus rule files that promtool lets through.

Modules, one concern each: :mod:`~generator.lint.loader` (reading files),
:mod:`~generator.lint.promql` (parsing), :mod:`~generator.lint.registry` (the check interface),
:mod:`~generator.lint.checks` (one module per check, listed explicitly),
:mod:`~generator.lint.labels` (label-set inference), :mod:`~generator.lint.changes` (diff
mode), :mod:`~generator.lint.config`, :mod:`~generator.lint.promtool_step`,
:mod:`~generator.lint.engine`,
:mod:`~generator.lint.output` and :mod:`~generator.lint.command` (the CLI).
"""

from generator.lint.config import LintConfig
from generator.lint.engine import Report, lint_files, lint_paths
from generator.lint.model import Finding, Severity

__all__ = ["Finding", "LintConfig", "Report", "Severity", "lint_files", "lint_paths"]
