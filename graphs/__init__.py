"""Strategy graphs: wiring only. Each module exposes ``build_graph(...)`` and a compiled ``graph``."""
