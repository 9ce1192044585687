"""The ``obsgen`` subcommands, one module each (``render``, ``check``, ``explain``, ``verify``;
``lint`` is :mod:`generator.lint.command`), each exposing ``configure(parser)`` and ``run(args)``.
"""
