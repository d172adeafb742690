"""Collects the parser-conformance tests of test262_parser.py (see its docstring)."""

from jsfixtures import node, sluice_js  # noqa: F401 (fixtures)
from test262_parser import (  # noqa: F401 (collected by pytest)
    selection,
    test_selection_keeps_a_useful_share,
    test_sluice_accepts_selected_pass_files,
    test_sluice_refuses_selected_bad_files,
)
