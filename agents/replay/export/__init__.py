"""`codeduet export`: saved runs in the formats other tools read (an Inspect eval log, chat-format JSONL, a folder
of the final code); agents/replay/export/runs.py picks the runs and walks their conversations, one module per format."""
