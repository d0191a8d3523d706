"""agents/bench/dropped_defs.py: counting whole-file replies that drop what a module had, over real run folders."""

from __future__ import annotations

from agents.bench.dropped_defs import main, scan
from agents.conversation import RunOptions, run_scenario
from agents.scenario import load_scenario

MODULE = "import os\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef mode(xs):\n    return max(xs)\n"


def test_a_reply_that_rewrites_a_module_without_one_of_its_functions_is_counted(loop_file, workspaces, capsys):
    drops = "```python\n# filename: stats.py\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"
    keeps = ("```python\n# filename: stats.py\nimport os\n\ndef mean(xs):\n    return 0\n\n"
             "def mode(xs):\n    return 1\n```")
    path = loop_file([drops, keeps, "TERMINATE"], files={"stats.py": MODULE}, checks=[{"file_exists": "nope.txt"}],
                     strategy={"attempts": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    rows = scan(result.run_dir)
    # the second reply is compared with what the first saved (mean alone), not with the starting file
    assert [(r["dropped_defs"], r["dropped_imports"], r["kept_defs"]) for r in rows] == [(["mode"], ["os"], 1),
                                                                                      ([], [], 1)]
    main([str(workspaces)])
    assert "2 rewrites of an existing module: 1 dropped a top-level function or class" in capsys.readouterr().out
