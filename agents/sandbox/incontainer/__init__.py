"""Scripts that run inside the sandbox, shipped as files: stdlib-only Python (python3 is in every image), written fresh
into the workspace's hidden checks folder before each run (agents/sandbox/filenames.py CHECKS_DIR)."""
