"""The data engine: run family instances on phones, keep only verified runs, export them.

T3-Agent's data pipeline (query -> trajectory -> query and trajectory verifiers) on the
simulated phone, where the phone's state validator is the ground truth: a run is exported
only when the validator passed it, and each record says so and why.

Import the parts by their modules (``eval.data_engine.export``: ``export_runs``,
``ExportSummary``). This package imports nothing itself: ``mobile-agent`` loads the ``data``
command's module (``eval.data_engine.cli``) at every start, and the export's verifiers bring
the OpenAI client's types (about 0.65 s) that no other command needs.

May import: eval.families, eval.mobile_eval, mobile_agent (public API).
"""
