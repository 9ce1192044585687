"""Generated promtool test cases, one module per kind of alert, and the test files they make.

The top layer of the generator's folders: it reads the builders' rules to compute each case's
expectations (docs/architecture.md, "Layers").
"""
