"""Presets and declared packages: the image a scenario's sandbox needs is named by its package set, built by
`sandbox build SCENARIO.yaml` (Debian's packages in the rootfs, PyPI's wheels installed offline in a layer, crates
vendored with the host's cargo in a layer a Cargo project builds from offline), pinned
in the image's labels and the run's transcript; a run whose image lacks them stops before it starts, with one line
naming the build command; a report after a missing module names the declaration that would have provided it.
The Docker tests build real images and run real containers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.errors import ImageMissing
from agents.record.transcript import load_transcript
from agents.sandbox.cli import _split
from agents.sandbox.config import SandboxConfig, image_tag, package_hash
from agents.sandbox.crates import locked
from agents.sandbox.offline import missing_package_note, pip_note
from agents.sandbox.packages import (
    PYTHON_PINS_LABEL,
    RUST_LABEL,
    RUST_PINS_LABEL,
    has_python,
    has_rust,
    missing,
    pinned,
)
from agents.sandbox.preflight import preflight
from agents.sandbox.presets import PRESETS
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT, py
from tests.helpers import run_cli, toolchains_image

ALL = ("c", "cpp", "go", "javascript", "rust")
TABULATE = "tabulate==0.9.0"
ITOA = "itoa==1.0.11"


# -- configuration, no Docker --------------------------------------------------------------------------------------
def test_a_preset_adds_its_languages_debian_packages_and_larger_limits():
    cfg = SandboxConfig(preset="backend")
    assert cfg.languages == ["go", "javascript"] and "python3-flask" in cfg.debian_packages
    assert (cfg.memory, cfg.pids, cfg.timeout) == ("2g", 1024, 60.0)
    assert cfg.image == f"codeduet-sandbox:go-javascript-p{package_hash(PRESETS['backend'].debian)}"
    web = SandboxConfig(preset="web", languages=["c"], pids=200)
    assert web.languages == ["c", "go", "javascript"] and web.pids == 200  # what the scenario sets wins
    assert set(PRESETS["frontend"].debian) | set(PRESETS["backend"].debian) == set(web.debian_packages)
    assert SandboxConfig(preset="frontend").build_command == "codeduet sandbox build --languages javascript " \
        "--preset frontend"


def test_the_image_tag_is_named_by_the_package_set_not_by_how_it_was_declared():
    declared = SandboxConfig(languages=["go", "javascript"], packages={"debian": list(PRESETS["backend"].debian)})
    assert declared.image == SandboxConfig(preset="backend").image
    python = SandboxConfig(packages={"python": ["Tabulate == 0.9.0", "requests"]})
    assert python.packages.python == ["requests", TABULATE]  # normal names, sorted
    assert python.image == image_tag((), (), ["requests", TABULATE]) and python.image.startswith(
        "codeduet-sandbox:python-p") and python.memory == "512m"
    assert SandboxConfig().image == "codeduet-sandbox:latest" and SandboxConfig(languages=["go"]).image == \
        "codeduet-sandbox:go"


@pytest.mark.parametrize("packages, message", [
    ({"rust": ["serde>=1"]}, "'serde>=1' is not a crate: use a name or name==version"),
    ({"javascript": ["lodash"]}, "npm registry is not reachable; declare Debian's package instead "
                                 "(packages.debian: [node-lodash])"),
    ({"python": ["numpy>=2"]}, "'numpy>=2' is not a PyPI requirement: use a name or name==version"),
    ({"debian": ["Flask"]}, "'Flask' is not a Debian package name"),
])
def test_a_package_that_cannot_be_declared_is_one_line(packages, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        SandboxConfig(packages=packages)


def test_pins_in_labels_say_what_an_image_has():
    labels = {PYTHON_PINS_LABEL: json.dumps([{"name": "tabulate", "version": "0.9.0", "sha256": "ab" * 32}])}
    assert has_python([TABULATE, "tabulate"], labels) and not has_python(["tabulate==0.8.0"], labels)
    assert not has_python(["requests"], labels) and has_python([], {})
    assert pinned(labels) == {"python": {"tabulate": f"0.9.0 sha256:{'ab' * 32}"}}


def test_declared_crates_add_rust_and_name_the_image():
    cfg = SandboxConfig(packages={"rust": ["serde[derive] == 1.0.210", "rand", "rand"]})
    assert cfg.packages.rust == ["rand", "serde[derive]==1.0.210"] and cfg.languages == ["rust"]
    assert cfg.image == image_tag(["rust"], (), (), cfg.packages.rust)
    assert cfg.image.startswith("codeduet-sandbox:rust-p") and cfg.build_command.endswith(
        "--rust rand,serde[derive]==1.0.210")
    assert package_hash(["sqlite3"], [TABULATE]) == package_hash(["sqlite3"], [TABULATE], [])  # old names stay
    assert _split("serde[derive,std]==1.0.210, rand itoa") == ["serde[derive,std]==1.0.210", "rand", "itoa"]


LOCK = """version = 4

[[package]]
name = "codeduet-crates"
version = "0.0.0"
dependencies = ["itoa"]

[[package]]
name = "itoa"
version = "1.0.11"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "49f1f14873335454500d59611f1cf4a4b0f786f9ac11f4312a78e4cf2566695b"
"""


def test_crates_are_pinned_from_the_lock_file_and_labels_say_which_an_image_has():
    pins = locked(LOCK)  # the throwaway project itself has no checksum: not a crate of the image
    assert pins == [{"name": "itoa", "version": "1.0.11",
                     "sha256": "49f1f14873335454500d59611f1cf4a4b0f786f9ac11f4312a78e4cf2566695b"}]
    labels = {RUST_PINS_LABEL: json.dumps(pins + [{"name": "itoa", "version": "0.4.8", "sha256": "cd" * 32}])}
    assert has_rust([ITOA, "itoa", "itoa[std]==0.4.8"], labels) and not has_rust(["itoa==1.0.10"], labels)
    assert missing(labels, [TABULATE], ["serde", ITOA]) == [TABULATE, "serde"]
    assert set(pinned(labels)["rust"]) == {"itoa 1.0.11", "itoa 0.4.8"}  # two versions of a crate: both said


def test_a_host_without_cargo_is_told_in_one_line_before_anything_is_built(tmp_path):
    proc = codeduet("sandbox", "build", "--rust", ITOA, env={"PATH": str(tmp_path)})
    assert proc.returncode == 3 and proc.stderr.strip() == "error: packages.rust needs cargo on this machine to " \
        "fetch the crates (crates.io from here): install Rust (apt-get install cargo, or rustup) and build again"


# -- the report after a missing module, no Docker ------------------------------------------------------------------
def test_a_missing_module_names_the_declaration_that_would_have_provided_it(tmp_path):
    note = missing_package_note("Traceback ...\nModuleNotFoundError: No module named 'sklearn.linear_model'")
    assert "`sandbox.packages.python: [scikit-learn]`" in note and "codeduet sandbox build SCENARIO.yaml" in note
    assert "[pillow]" in missing_package_note("ModuleNotFoundError: No module named 'PIL'")
    assert "`sandbox.packages.debian: [node-express]`" in missing_package_note("Error: Cannot find module 'express'")
    assert missing_package_note("Error: Cannot find module './db'") == ""
    (tmp_path / "helpers.py").write_text("x = 1\n")  # the model's own module, not a package
    assert missing_package_note("ModuleNotFoundError: No module named 'helpers'", tmp_path) == ""
    assert "declares `sandbox.packages.python: [scikit-learn]`" in pip_note("pip install scikit-learn", "any:tag")


# -- Docker: a derived image with a PyPI package -------------------------------------------------------------------
def codeduet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, env=env, timeout=900)


@pytest.mark.docker
@pytest.mark.slow
def test_a_declared_pypi_package_stops_the_run_before_the_build_then_builds_and_runs_offline(
        sandbox_image, workspaces, scenario_file):
    from agents.sandbox.image import image_status, remove_image

    path = scenario_file([py("import tabulate\nprint('TABULATE', tabulate.__version__)")],
                         sandbox={"packages": {"python": [TABULATE]}})
    data = yaml.safe_load(path.read_text())
    del data["sandbox"]["image"]  # the image named by its packages
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    cfg = load_scenario(path).sandbox
    remove_image(cfg.image, base=False)
    with pytest.raises(ImageMissing) as missing:
        preflight(cfg.model_copy(), path)
    assert str(missing.value) == f"no sandbox image {cfg.image} is built: run `codeduet sandbox build {path}` " \
        "(offline from the packages it fetches; a few minutes)"
    before = codeduet("run", str(path))
    assert before.returncode == 3 and f"codeduet sandbox build {path}" in before.stderr
    assert len(before.stderr.strip().splitlines()) == 1 and not list(workspaces.iterdir())  # nothing started

    built = codeduet("sandbox", "build", str(path))
    assert built.returncode == 0, built.stderr[-2000:]
    labels = image_status(cfg.image)["labels"]
    pins = pinned(labels)["python"]
    assert list(pins) == ["tabulate"] and pins["tabulate"].startswith("0.9.0 sha256:")
    assert len(pins["tabulate"].split("sha256:")[1]) == 64
    again = codeduet("sandbox", "build", str(path))
    assert again.returncode == 0 and f"{cfg.image}: built" in again.stdout  # nothing built twice

    result = run_scenario(load_scenario(path), RunOptions())
    transcript = load_transcript(result.run_dir)
    output = [m for m in transcript["messages"] if m["role"] == "execution"][0]["outcome"]["executions"][0]
    assert result.status == "success" and "TABULATE 0.9.0" in output["output"]
    assert transcript["sandbox"]["image"] == cfg.image and transcript["sandbox"]["packages"] == {"python": pins}
    events = [json.loads(line) for line in (result.run_dir / "events.jsonl").read_text().splitlines()]
    sandbox = next(e for e in events if e["type"] == "sandbox")  # the executor's describe(), each attempt
    assert sandbox["image"] == cfg.image and sandbox["image_packages"] == {"python": pins}
    assert sandbox["packages"]["python"] == [TABULATE]


CARGO_PROJECT = """cat > Cargo.toml <<'EOF'
[package]
name = "p"
version = "0.1.0"
edition = "2021"

[dependencies]
itoa = "1"
EOF
mkdir -p src
cat > src/main.rs <<'EOF'
fn digits(n: u64) -> String { itoa::Buffer::new().format(n).to_string() }
fn main() { println!("ITOA {}", digits(1234567)); }
#[cfg(test)]
mod tests { #[test] fn formats() { assert_eq!(super::digits(42), "42"); } }
EOF
echo written"""


@pytest.mark.docker
@pytest.mark.slow
def test_declared_crates_stop_the_run_before_the_build_then_are_vendored_and_a_cargo_project_builds_offline(
        web_image, workspaces, scenario_file):
    from agents.sandbox.image import image_status, remove_image

    path = scenario_file([f"Here is the project:\n```sh\n{CARGO_PROJECT}\n```"],
                         sandbox={"packages": {"rust": [ITOA]}, "timeout": 300},
                         checks=[{"command": "cargo run -q | grep -x 'ITOA 1234567' && cargo test -q"}])
    data = yaml.safe_load(path.read_text())
    del data["sandbox"]["image"]  # the image named by its packages
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    cfg = load_scenario(path).sandbox
    assert cfg.languages == ["rust"] and cfg.image.startswith("codeduet-sandbox:rust-p")
    remove_image(cfg.image, base=False)
    with pytest.raises(ImageMissing) as missing:
        preflight(cfg.model_copy(), path)
    assert str(missing.value) == f"no sandbox image {cfg.image} is built: run `codeduet sandbox build {path}` " \
        "(offline from the packages it fetches; a few minutes)"

    built = codeduet("sandbox", "build", str(path))  # a layer over the web image, which has Rust
    assert built.returncode == 0, built.stderr[-2000:]
    labels = image_status(cfg.image)["labels"]
    pins = pinned(labels)["rust"]
    assert labels[RUST_LABEL] == ITOA and list(pins) == ["itoa"] and pins["itoa"].startswith("1.0.11 sha256:")
    assert len(pins["itoa"].split("sha256:")[1]) == 64

    result = run_scenario(load_scenario(path), RunOptions())
    transcript = load_transcript(result.run_dir)
    assert result.status == "success", [m["content"][-1500:] for m in transcript["messages"]
                                        if m["role"] == "execution"]
    assert transcript["sandbox"]["image"] == cfg.image and transcript["sandbox"]["packages"]["rust"] == pins


@pytest.mark.docker
def test_a_missing_module_in_a_run_is_reported_with_its_declaration(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("from sklearn.linear_model import LinearRegression\nprint(1)")],
                         user_proxy={"max_consecutive_auto_reply": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    report = [m for m in load_transcript(result.run_dir)["messages"] if m["role"] == "execution"][-1]["content"]
    assert "`sandbox.packages.python: [scikit-learn]`" in report


# -- Docker: the union image with the web preset -------------------------------------------------------------------
WEB = image_tag(ALL, SandboxConfig(preset="web").debian_packages)


@pytest.fixture(scope="module")
def web_image() -> str:
    """The image with every toolchain and the web preset (`make image-languages` builds it), built if missing."""
    assert toolchains_image() == WEB
    return WEB


@pytest.mark.docker
def test_every_preset_and_language_set_runs_in_the_web_image(web_image):
    from agents.sandbox.image import image_status, resolve_image

    labels = image_status(web_image)["labels"]
    versions = pinned(labels)["debian"]
    assert set(versions) == set(SandboxConfig(preset="web").debian_packages) and "?" not in versions.values()
    for cfg in (SandboxConfig(preset="backend"), SandboxConfig(preset="frontend"), SandboxConfig(preset="web"),
                SandboxConfig(languages=["c"], packages={"debian": ["node-express"]})):
        if not image_status(cfg.image).get("exists"):
            assert resolve_image(cfg.image, cfg.languages, None, cfg.debian_packages) in {web_image, cfg.image}
    lacking = SandboxConfig(languages=["go"], packages={"debian": ["sqlite3"]})
    if not image_status(lacking.image).get("exists"):
        assert resolve_image(lacking.image, lacking.languages, None, lacking.debian_packages) == lacking.image


WEB_CHECK = r"""
set -e
python3 -c 'import flask, fastapi, uvicorn, httpx, requests, multipart; print("python ok")'
node -e 'require("express"); require("supertest"); require("jsdom"); require("react"); require("react-dom");
         console.log("node ok")'
for b in $BROWSERS; do [ -x "$b" ] && CHROMIUM=$b && break; done
test -x "$CHROMIUM" && "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom 'data:text/html,<p id=x>hi</p>' \
  2>/dev/null | grep -q '<p id="x">hi</p>' && echo "chromium ok"
id -u
"""


@pytest.mark.docker
def test_the_web_image_has_its_packages_for_the_sandbox_user_on_a_read_only_root(web_image):
    from agents.sandbox.incontainer.cdp import BROWSERS  # where the page check looks for the browser

    browsers = " ".join(b for b in BROWSERS if b.startswith("/"))
    proc = subprocess.run(["docker", "run", "--rm", "--network", "none", "--read-only", "--tmpfs", "/tmp",
                           "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "-e", f"BROWSERS={browsers}",
                           web_image, "sh", "-c", WEB_CHECK], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["python", "ok", "node", "ok", "chromium", "ok", "1000"], proc.stderr


@pytest.mark.docker
def test_hostile_cases_are_contained_in_the_web_image(web_image):
    """A few cases of the hostile suite, run as they are in the derived image (CODEDUET_TEST_IMAGE)."""
    cases = "network_egress or privileged_operations or daemon_does_not_outlive or fork_bomb"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_hostile.py",
                           "-k", cases], capture_output=True, text=True, cwd=ROOT, timeout=900,
                          env={**os.environ, "CODEDUET_TEST_IMAGE": web_image})
    assert proc.returncode == 0 and " passed" in proc.stdout and "failed" not in proc.stdout, proc.stdout[-3000:]


def test_the_system_prompt_names_what_the_image_adds_and_nothing_when_it_adds_nothing():
    from agents.feedback.prompts import system_message

    backend = SandboxConfig(preset="backend")
    text = system_message(False, backend.languages, False, backend.installed)
    assert "Python packages fastapi, flask, httpx" in text and "Node modules express, supertest" in text
    crates = SandboxConfig(packages={"rust": ["itoa==1.0.11"]})
    text = system_message(False, crates.languages, False, crates.installed)
    assert "Rust crates itoa==1.0.11" in text and "(only the crates named below, offline)" in text
    assert system_message() == system_message(packages=SandboxConfig().installed)  # a plain sandbox: unchanged
