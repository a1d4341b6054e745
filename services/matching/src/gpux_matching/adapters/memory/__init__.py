"""Matching's fakes: the same repositories and units of work as ``adapters.postgres``, kept in
plain objects (``repositories``, ``unit_of_work``), for the service tests. The contract tests
(``tests/contract``) run one suite against both.
"""
