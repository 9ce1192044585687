"""Shared parts of the families and the builders: rule and panel shapes, pods, synthetic series.

The lowest layer of the generator's folders: it imports neither the families nor the builders
(docs/architecture.md, "Layers").
"""
