"""What a shell block's `pip install` meets in a sandbox with no network: one line saying so, and what the image has;
and after a missing module (`ModuleNotFoundError`, node's `Cannot find module`), the declaration that would have put
its package in the image (`sandbox.packages`).

AG2 silences pip's output (`-qqq`); codeduet says what happened instead, so the model stops asking for packages.
"""

from __future__ import annotations

import re
from pathlib import Path

from agents.feedback.prompts import render
from agents.loop.defaults import SANDBOX_IMAGE
from agents.sandbox.config import python_name
from agents.sandbox.image import PYTHON_PACKAGES

PIP_INSTALL = re.compile(r"^[ \t]*(?:sudo[ \t]+)?(?:python3?[ \t]+-m[ \t]+)?pip3?[ \t]+install\b([^\n;&|]*)", re.M)
"""A command line that is `pip install ...` (also `pip3`, `python -m pip`, after `sudo`)."""


def requested(code: str) -> list[str]:
    """The packages a shell script's `pip install` lines name (options left out), in order; [] when it has none."""
    names: list[str] = []
    for match in PIP_INSTALL.finditer(code):
        names += [w for w in match.group(1).split() if not w.startswith("-") and w not in names]
    return names


def pip_note(code: str, image: str) -> str:
    """The line added under a shell block's output when it runs `pip install` with no network; '' when it does not.
    For codeduet's own image it lists the packages there (and which of those asked for are among them)."""
    if not PIP_INSTALL.search(code):
        return ""
    asked = requested(code)
    what = f"`pip install {' '.join(asked)}`" if asked else "`pip install`"
    present = [a for a in asked if re.split(r"[<>=!~\[ ]", a.lower())[0] in PYTHON_PACKAGES]
    absent = [a for a in asked if a not in present and not a.endswith((".txt", ".whl", ".gz")) and "/" not in a]
    declare = f". {render('declare_pip', names=', '.join(absent))}" if absent else ""
    if image != SANDBOX_IMAGE:
        return (f"[codeduet: {what} cannot download anything: the sandbox has no network. Use the standard library "
                f"and what the image {image} already has{declare}]")
    note = f"; {', '.join(present)} {'is' if len(present) == 1 else 'are'} already there" if present else ""
    return (f"[codeduet: {what} cannot download anything: the sandbox has no network. Its Python has the standard "
            f"library and {', '.join(PYTHON_PACKAGES)}{note}; use those{declare}]")


DISTRIBUTIONS = {
    "sklearn": "scikit-learn", "skimage": "scikit-image", "PIL": "pillow", "yaml": "pyyaml",
    "bs4": "beautifulsoup4", "cv2": "opencv-python-headless", "dateutil": "python-dateutil",
    "dotenv": "python-dotenv", "jwt": "pyjwt", "Crypto": "pycryptodome", "docx": "python-docx",
    "pptx": "python-pptx", "fitz": "pymupdf", "attr": "attrs", "serial": "pyserial", "magic": "python-magic",
    "psycopg2": "psycopg2-binary", "MySQLdb": "mysqlclient", "google.protobuf": "protobuf", "jose": "python-jose",
    "multipart": "python-multipart", "Levenshtein": "levenshtein", "tomli_w": "tomli-w",
}
"""Import names whose PyPI distribution has another name (`import sklearn` is scikit-learn's)."""
NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z_][\w.]*)'")
NO_NODE_MODULE = re.compile(r"Cannot find module '([^'./][^']*)'")


def distribution(module: str) -> str:
    """The PyPI distribution an import name comes from (its top-level package, or the known other name)."""
    top = module.split(".")[0]
    return DISTRIBUTIONS.get(module) or DISTRIBUTIONS.get(top) or python_name(top)


def missing_package_note(output: str, workspace: Path | None = None) -> str:
    """The line naming the declaration that would have provided a module a failed run could not import; '' when
    none is missing, or when the module is a file of the workspace (the model's own, not a package)."""
    if match := NO_MODULE.search(output):
        module = match[1]
        top = module.split(".")[0]
        if workspace is not None and ((workspace / f"{top}.py").exists() or (workspace / top).is_dir()):
            return ""
        name = distribution(module)
        what = f"`{top}` is not installed" + (f" (PyPI's {name})" if name != top else "")
        return render("declare_package", what=what, declaration=f"sandbox.packages.python: [{name}]")
    if match := NO_NODE_MODULE.search(output):
        module = match[1]
        scoped = module.startswith("@")  # @scope/name: node-scope-name; name/sub: node-name
        package = "node-" + (module[1:].replace("/", "-") if scoped else module.split("/")[0])
        return render("declare_package", what=f"node has no module `{module}` (Debian's {package}, if it has one)",
                      declaration=f"sandbox.packages.debian: [{package}]")
    return ""
