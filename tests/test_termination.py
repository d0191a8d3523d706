"""Termination predicates (agents/loop/termination.py): each kind registered by name with its own evaluation; any/all
nest; a predicate never reads codeduet's own reports."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from agents.loop.termination import PREDICATES, Predicate, RunContext, compile_predicate

CASES = [
    ({"contains": "DONE"}, "all DONE here", True),
    ({"endswith": "TERMINATE"}, "ok TERMINATE  ", True),
    ({"regex": r"\bTERMINATE\b"}, "TERMINATED", False),
    ({"any": [{"contains": "A"}, {"contains": "B"}]}, "xB", True),
    ({"any": [{"contains": "A"}, {"contains": "B"}]}, "x", False),
    ({"all": [{"contains": "A"}, {"contains": "B"}]}, "AB", True),
    ({"all": [{"contains": "A"}, {"contains": "B"}]}, "A", False),
    ({"all": [{"any": [{"contains": "A"}, {"contains": "C"}]}, {"endswith": "B"}]}, "C..B", True),
]


@pytest.mark.parametrize("spec,message,expected", CASES)
def test_each_kind_decides_by_its_own_rule(spec, message, expected):
    predicate = compile_predicate(TypeAdapter(Predicate).validate_python(spec))
    assert predicate({"content": message}, RunContext(sent_contents=set())) is expected


def test_every_kind_is_registered_by_the_key_that_names_it_in_yaml():
    assert {"contains", "endswith", "regex", "success", "callable", "any", "all"} <= set(PREDICATES)
    assert [k for k, cls in PREDICATES.items() if cls.nests] == ["any", "all"]


def test_a_report_codeduet_sent_is_never_judged_as_a_reply():
    report = "The code ran. TERMINATE"
    predicate = compile_predicate(TypeAdapter(Predicate).validate_python({"contains": "TERMINATE"}))
    assert not predicate({"content": report}, RunContext(sent_contents={report}))
