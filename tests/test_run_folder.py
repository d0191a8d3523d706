"""The run folder's exchange files (agents/record/run_folder.py): what another process reads is written whole, an answer
to a person's prompt is created once (the first one wins), and the HITL reader takes it without waiting for it to
be filled."""

from __future__ import annotations

import threading

from agents.record.run_folder import answer_file, create_atomic, wait_answer, write_answer, write_atomic


def test_an_answer_is_created_once_and_whole(tmp_path):
    assert write_answer(tmp_path, 1, {"choice": "reply", "text": "x" * 100_000})
    assert not write_answer(tmp_path, 1, {"choice": "end", "text": ""})  # another tab answered first
    assert wait_answer(tmp_path, 1) == {"choice": "reply", "text": "x" * 100_000}
    assert sorted(p.name for p in tmp_path.iterdir()) == [answer_file(1)]  # no temporary file left behind


def test_the_reader_waits_for_an_answer_written_by_another_thread(tmp_path):
    writer = threading.Timer(0.2, write_answer, (tmp_path, 2, {"choice": "skip"}))
    writer.start()
    assert wait_answer(tmp_path, 2, poll_s=0.01) == {"choice": "skip"}
    writer.join()


def test_an_atomic_write_replaces_the_file_and_a_create_never_does(tmp_path):
    path = tmp_path / "transcript.json"
    write_atomic(path, "old")
    write_atomic(path, "new")
    assert path.read_text() == "new" and not create_atomic(path, "other") and path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["transcript.json"]
