"""The device farm: many hosts with their own phones, one queue on PostgreSQL (docs/farm.md).

``host`` is ``mobile-agent worker`` (one per host), ``service`` the API server's side
(``serve --farm``), ``queue`` the procrastinate jobs, ``registry`` the hosts and phones,
``routing`` which phones may run a task, ``recurring`` the schedules.
"""
