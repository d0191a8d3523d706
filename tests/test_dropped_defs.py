"""A whole-file reply that leaves out a definition the code still needs keeps it (agents/feedback/dropped_defs.py): in
a real
run in the Docker sandbox, its report and its replay; and the rule on real files: what counts as still needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.feedback.dropped_defs import keep_needed, with_needed
from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.helpers import run_cli

PRICING = '''"""Prices in cents."""
CENT = 100


def apply_discount(cents, percent):
    return cents * (100 - percent) // 100


def _two(n):
    return f"{n:02d}"


def format_cents(cents):
    return f"${cents // CENT}.{_two(cents % CENT)}"


def unused():
    return 0
'''
CART = "from shop.pricing import apply_discount, format_cents\n\n\ndef total(c, p):\n    return format_cents(" \
       "apply_discount(c, p))\n"
# the fix the model sent: apply_discount rounds half up now, and the rest of the module is gone
ONLY_THE_FIX = "# filename: shop/pricing.py\ndef apply_discount(cents, percent):\n" \
               "    return (cents * (100 - percent) + 50) // 100\n"
CHECK = ("from shop.cart import total\nfrom shop.pricing import apply_discount\n\n\n"
         "def test_rounds_half_up():\n    assert apply_discount(1, 50) == 1\n\n\n"
         "def test_total():\n    assert total(105, 0) == '$1.05'\n")


def shop(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "shop").mkdir(parents=True)
    (ws / "shop" / "__init__.py").write_text("")
    (ws / "shop" / "pricing.py").write_text(PRICING)
    (ws / "shop" / "cart.py").write_text(CART)
    return ws


@pytest.mark.docker
def test_a_fix_that_drops_an_imported_function_keeps_it_and_passes(sandbox_image, scenario_file, tmp_path,
                                                                   workspaces):
    (tmp_path / "test_shop_hidden.py").write_text(CHECK)
    path = scenario_file([f"Here is the fix.\n```python\n{ONLY_THE_FIX}```", "TERMINATE"],
                         task="Make apply_discount round half up.",
                         files={"shop/__init__.py": "", "shop/pricing.py": PRICING, "shop/cart.py": CART},
                         checks=[{"pytest": "test_shop_hidden.py"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    report = t["messages"][2]
    (kept,) = report["outcome"]["kept"]
    assert kept["names"] == ["_two", "format_cents"] and kept["also"] == ["CENT"]
    assert kept["why"] == {"_two": "format_cents() uses it", "format_cents": "shop/cart.py imports it"}
    assert "kept _two(), format_cents() in shop/pricing.py from its previous version" in report["content"]
    saved = (result.run_dir / "workspace" / "shop" / "pricing.py").read_text()
    assert "(cents * (100 - percent) + 50) // 100" in saved and "def format_cents" in saved
    assert "def unused" not in saved  # nothing needs it: left out, as the reply wrote the module
    assert t["messages"][1]["content"].count("def ") == 1  # the message is kept as the model wrote it
    replayed = run_cli("replay", str(result.run_dir), "--execute")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr  # saved again the same way: same verdicts


def test_only_what_the_code_still_needs_is_kept(tmp_path):
    ws = shop(tmp_path)
    code, kept = with_needed(ONLY_THE_FIX, ws)
    assert kept is not None and kept.names == ["_two", "format_cents"]
    assert code.startswith("# filename: shop/pricing.py\nCENT = 100\n\n\ndef apply_discount")  # what they use
    assert "(cents * (100 - percent) + 50) // 100" in code and code.index("CENT") < code.index("def format_cents")
    compile(code, "pricing.py", "exec")
    (ws / "shop" / "cart.py").write_text("from shop.pricing import apply_discount\n")  # nobody needs format_cents
    assert with_needed(ONLY_THE_FIX, ws) == (ONLY_THE_FIX, None)


@pytest.mark.parametrize("importer", [
    "import shop.pricing as p\nprint(p.format_cents(5))\n",
    "from shop import pricing\nprint(pricing.format_cents(5))\n",
    "from .pricing import format_cents\n",
])
def test_each_way_of_importing_it_counts(tmp_path, importer):
    ws = shop(tmp_path)
    (ws / "shop" / "cart.py").write_text(importer)
    _, kept = with_needed(ONLY_THE_FIX, ws)
    assert kept is not None and "format_cents" in kept.names, importer


def test_a_test_beside_the_module_imports_it_by_its_short_name(tmp_path):
    (tmp_path / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef median(xs):\n"
                                       "    return sorted(xs)[len(xs) // 2]\n")
    (tmp_path / "test_stats.py").write_text("from stats import mean, median\n")
    new = "# filename: stats.py\ndef median(xs):\n    s = sorted(xs)\n    return s[len(s) // 2]\n"
    code, kept = with_needed(new, tmp_path)
    assert kept is not None and kept.names == ["mean"] and kept.why == {"mean": "test_stats.py imports it"}
    namespace: dict = {}
    exec(compile(code, "stats.py", "exec"), namespace)
    assert namespace["mean"]([1, 2, 3]) == 2 and namespace["median"]([3, 1, 2]) == 2


def test_the_new_text_calling_a_dropped_helper_keeps_it_but_a_local_of_that_name_does_not(tmp_path):
    (tmp_path / "m.py").write_text("def helper():\n    return 1\n\n\ndef main():\n    return helper()\n")
    calls = "# filename: m.py\ndef main():\n    return helper() + 1\n\n\nif __name__ == '__main__':\n    main()\n"
    code, kept = keep_needed("m.py", calls, tmp_path)
    assert kept is not None and kept.why == {"helper": "the new text uses it"}
    assert code.index("def helper") < code.index("if __name__")  # before the main block, which calls main()
    shadows = "# filename: m.py\ndef main():\n    helper = 2\n    return helper\n"
    assert keep_needed("m.py", shadows, tmp_path) == (shadows, None)


def test_nothing_changes_when_either_text_does_not_parse_or_the_file_is_new(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return f()\n")
    broken = "# filename: m.py\ndef g(:\n    return f()\n"
    assert keep_needed("m.py", broken, tmp_path) == (broken, None)
    new_file = "# filename: n.py\ndef g():\n    return f()\n"
    assert with_needed(new_file, tmp_path) == (new_file, None)
    not_python = "# filename: notes.txt\nf()\n"
    assert with_needed(not_python, tmp_path) == (not_python, None)
