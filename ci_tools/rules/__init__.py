"""Rule metadata: every rule's id, summary and documentation.

Each module of this package declares the rules of one family with
:func:`ci_tools.rules.registry.register`; the code that emits a rule's
findings imports the rule from here.  :func:`all_rules` discovers the modules,
so a new family needs no list to be kept in step.
"""

from __future__ import annotations

from .registry import Rule, all_rules, get_rule, make_finding, register

__all__ = ["Rule", "all_rules", "get_rule", "make_finding", "register"]
