"""Task families on the simulated phone: many seeded instances of each kind of task.

A family (after android_world's task classes: a template, ``generate_random_params``,
``initialize_task``, ``is_successful``) is an instruction template with several phrasings,
a seeded parameter generator, the phone's initial state beyond the reset (plain adb shell
commands: ``settings put``, ``cmd uimode night``, ``cmd connectivity airplane-mode``,
``cmd simphone clock``), a validator of the final state (the intended change and the usual
guards: nothing else changed) and a reference solution built from the parameters. An
instance is a Mobile-Eval ``EvalTask``, so the same runner, reports and step metrics apply.

May import: eval.mobile_eval, random.
"""

from eval.families.catalog import FAMILIES, Family, distinct_instances, family_by_name, sample_instances

__all__ = ["FAMILIES", "Family", "distinct_instances", "family_by_name", "sample_instances"]
