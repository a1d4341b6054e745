"""The billing service's pure rules: the double-entry ledger, its transfers and amounts.

Handlers build transfers with ``transfers`` (topup, hold, release, charge, exchange,
reversal), compute amounts with ``amounts`` (the only places billing rounds), and post them
through the unit of work's ledger (``gpux_billing.service.unit_of_work.Ledger``), whose
stores follow ``posting``. Leases (``leases``), holds (``holds``), top-ups (``topups``) and
FX crosses (``fx``) are rules of their own; ``rules`` gathers the operator's settings.
"""
