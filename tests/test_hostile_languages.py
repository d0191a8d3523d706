"""The hostile suite in the sandbox with toolchains (C here, built with the image's own gcc): a fork bomb, a memory
hog, a disk filler, network egress and privilege escalation, each delivered by the scripted model to a real
container of the language image. Nothing may escape, the evidence is measured inside the container, and the next
block of the same run still works. tests/test_hostile.py holds the Python cases for the default image."""

from __future__ import annotations

import re

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.test_languages import ALL, language_sandbox  # noqa: F401  (the session fixture that builds the image)

pytestmark = pytest.mark.docker


def c_program(name: str, source: str, cc: str = "cc") -> str:
    """A reply that saves a C file and builds and runs it from a shell block (no sanitizer: the kernel's limits are
    what is tested)."""
    return f"```c\n// filename: {name}.c\n{source.strip()}\n```\n```sh\n{cc} -O1 -o {name} {name}.c && ./{name}\n```"


def run_c(scenario_file, language_sandbox, replies: list[str], **sandbox):  # noqa: F811
    """Run the replies in a C sandbox of the language image; the execution reports, in order."""
    path = scenario_file(replies, sandbox={"image": language_sandbox, "languages": ["c"], "timeout": 10, **sandbox})
    result = run_scenario(load_scenario(path), RunOptions())
    return result, [m for m in load_transcript(result.run_dir)["messages"] if m["role"] == "execution"]


def last_exec(report: dict) -> dict:
    return report["outcome"]["executions"][-1]


AFTER = "```sh\necho still here; id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status\n```"


def assert_after_is_clean(report: dict) -> None:
    out = last_exec(report)["output"]
    assert last_exec(report)["exit_code"] == 0, out
    assert "still here" in out and "\n1000" in "\n" + out.split("still here")[1]
    assert re.search(r"CapEff:\s+0+\b", out) and re.search(r"NoNewPrivs:\s+1", out)


def test_a_c_fork_bomb_is_held_by_the_pids_limit(scenario_file, language_sandbox, workspaces):  # noqa: F811
    bomb = c_program("bomb", """
#include <stdio.h>
#include <unistd.h>
int main(void) {
    int refused = 0;
    for (;;) {
        if (fork() < 0 && !refused++) { perror("fork refused"); fflush(stderr); }
    }
}
""")
    result, (first, after) = run_c(scenario_file, language_sandbox, [bomb, AFTER], timeout=4, pids=64)
    ex = last_exec(first)
    assert ex["timed_out"] and "fork refused: Resource temporarily unavailable" in ex["output"]
    assert_after_is_clean(after)


def test_a_c_memory_hog_is_oom_killed(scenario_file, language_sandbox, workspaces):  # noqa: F811
    hog = c_program("hog", """
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    for (int i = 1; i <= 64; i++) {
        char *chunk = malloc(64 << 20);
        memset(chunk, 1, 64 << 20);
        printf("allocated %d MiB\\n", i * 64);
        fflush(stdout);
    }
    puts("all 4 GiB allocated");
}
""")
    result, (first, after) = run_c(scenario_file, language_sandbox, [hog, AFTER], memory="256m")
    ex = last_exec(first)
    assert ex["oom_killed"] and ex["exit_code"] == 137 and "all 4 GiB allocated" not in ex["output"]
    assert "the memory limit (256m) was hit" in first["content"]
    assert_after_is_clean(after)


def test_a_c_disk_filler_hits_the_workspace_limit(scenario_file, language_sandbox, workspaces):  # noqa: F811
    filler = c_program("filler", """
#include <stdio.h>
#include <string.h>
int main(void) {
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    FILE *f = fopen("big.bin", "wb");
    long written = 0;
    for (int i = 0; i < 1024; i++) {
        if (fwrite(block, 1, sizeof block, f) != sizeof block || fflush(f) != 0) { perror("write"); break; }
        written += sizeof block;
    }
    printf("wrote %ld MiB\\n", written >> 20);
    return 0;
}
""")
    result, (report,) = run_c(scenario_file, language_sandbox, [filler + "\n" + AFTER], disk="64m")
    ex = report["outcome"]["executions"][-2]  # the program's run; the last block ran after it
    assert "No space left on device" in ex["output"] and ex["disk_full"]
    assert int(re.search(r"wrote (\d+) MiB", ex["output"]).group(1)) < 64
    assert_after_is_clean(report)


def test_c_and_node_cannot_reach_the_network(scenario_file, language_sandbox, workspaces):  # noqa: F811
    egress = c_program("egress", """
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>
int main(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(53)};
    inet_pton(AF_INET, "1.1.1.1", &to.sin_addr);
    if (connect(s, (struct sockaddr *)&to, sizeof to) < 0) { perror("connect"); return 3; }
    puts("CONNECTED");
    return 0;
}
""")
    node = ("```sh\nnode -e \"require('net').connect(53, '1.1.1.1').on('connect', () => console.log('CONNECTED'))"
            ".on('error', e => { console.log('node:', e.code); process.exit(4) })\"\n```")
    result, (first, second) = run_c(scenario_file, language_sandbox, [egress, node],
                                    languages=["c", "javascript"])
    c_out, node_out = last_exec(first)["output"], last_exec(second)["output"]
    assert "CONNECTED" not in c_out and "connect: Network is unreachable" in c_out
    assert "CONNECTED" not in node_out and "ENETUNREACH" in node_out


def test_c_code_cannot_gain_privileges(scenario_file, language_sandbox, workspaces):  # noqa: F811
    escalate = c_program("escalate", """
#include <stdio.h>
#include <unistd.h>
int main(void) {
    if (setuid(0) != 0) perror("setuid(0)");
    if (chroot("/tmp") != 0) perror("chroot");
    printf("uid=%d euid=%d\\n", getuid(), geteuid());
    return 0;
}
""") + "\n```sh\nchmod u+s escalate && ./escalate; touch /usr/bin/planted || echo read-only root\n```\n" + AFTER
    result, (report,) = run_c(scenario_file, language_sandbox, [escalate])
    outs = "\n".join(e["output"] for e in report["outcome"]["executions"])
    assert "setuid(0): Operation not permitted" in outs and "chroot: Operation not permitted" in outs
    assert "euid=0" not in outs and "uid=1000 euid=1000" in outs and "read-only root" in outs
    assert_after_is_clean(report)
