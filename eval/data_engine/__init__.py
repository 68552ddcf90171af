"""The data engine: run family instances on phones, keep only verified runs, export them.

T3-Agent's data pipeline (query -> trajectory -> query and trajectory verifiers) on the
simulated phone, where the phone's state validator is the ground truth: a run is exported
only when the validator passed it, and each record says so and why.

May import: eval.families, eval.mobile_eval, mobile_agent (public API).
"""

from eval.data_engine.export import ExportSummary, export_runs

__all__ = ["ExportSummary", "export_runs"]
